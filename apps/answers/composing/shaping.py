"""Shaping the chosen sentences into an answer a person can read.

- A sentence from a section that has nothing to do with the question is left out: its
  chunk's title and headings share no content term with the question, and the sentence
  itself covers less than half of the question's terms (the best sentence always stays).
- A chosen list item or step, or the sentence that announces a list or table, of the
  best sentence's source brings the whole list along (up to MAX_LIST_ITEMS, within the length budget, best sentence first),
  and then only sentences of the same source follow: the list is the answer. The source's
  list stays a list, one "- item [cN]" line each; a table row becomes an item "first cell:
  the others"; numbered steps stay numbered.
- Prose sentences of one source in a row become one paragraph; a new source, or a list,
  starts a new block.
- A code block is quoted whole, fenced, with the sentence that introduces it (code.py); the
  one brings the other along as a list's intro brings the list.
- A table row is quoted under its table's header row: a Markdown table of the header, the
  rule and the rows of that table that were chosen, each cited in its last cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from apps.answers.composing.candidates import Scored, Sentence
from apps.answers.composing.code import cite_intro, code_after, intro_of
from apps.answers.composing.layout import cite, clip
from apps.answers.composing.structure import CODE, ITEM, PROSE, ROW, STEP
from apps.corpus.text import fenced

MAX_LIST_ITEMS = 10
LISTED = frozenset({ITEM, ROW})
MIN_OWN_COVERAGE = 0.5


def on_topic(chosen: Sequence[Scored], query_terms: frozenset[str]) -> list[Scored]:
    """The chosen sentences without those from sections unrelated to the question; the best
    sentence's own paragraph is on its topic (a default stated after the option it is of)."""
    if not chosen or not query_terms:
        return list(chosen)
    best = max(chosen, key=lambda s: s.score)
    return [
        s
        for s in chosen
        if s is best
        or (s.sentence.alias, s.sentence.line) == (best.sentence.alias, best.sentence.line)
        or s.sentence.heading_terms & query_terms
        or len(s.sentence.terms & query_terms) >= MIN_OWN_COVERAGE * len(query_terms)
    ]


def to_the_point(chosen: Sequence[Scored], states: Callable[[str], bool] | None) -> list[Scored]:
    """When the question asks for a value or a date (`states` tells a sentence that states one)
    and the best sentence states it, that is the answer: the chosen sentences stating none are
    left out, but the subject a kept sentence is shown with ("The default weight is 50, and the
    maximum is 100.", not the three sentences around it on what a weight is)."""
    if not chosen or states is None:
        return list(chosen)
    best = max(chosen, key=lambda s: s.score)
    if not states(best.sentence.text):
        return list(chosen)
    stating = {id(s) for s in chosen if states(s.sentence.text)}
    subjects = {
        (s.sentence.alias, s.sentence.subject)
        for s in chosen
        if id(s) in stating and s.sentence.subject >= 0
    }
    return [
        s for s in chosen if id(s) in stating or (s.sentence.alias, s.sentence.position) in subjects
    ]


def with_whole_lists(
    chosen: Sequence[Scored], scored: Sequence[Scored], *, max_chars: int
) -> list[Scored]:
    """The chosen sentences plus the rest of every list or table one of them belongs to.

    Best first, within the length budget: a whole list can take the room of the weaker
    sentences (the best one and its list always stay).
    """
    units: dict[tuple[int, int, int], Scored] = {}
    used = 0
    listed_from: int | None = None  # the source whose list answers the question
    ranked = sorted(chosen, key=lambda s: -s.score)
    for s in ranked:
        if listed_from is not None and s.sentence.rank != listed_from:
            continue  # a list is the answer: other sources would only pad it
        # Only the best source's lists: a list pulled in by a weaker sentence is padding.
        pulls = _pulls_list(s.sentence) and s.sentence.rank == ranked[0].sentence.rank
        listed = _list_of(s, scored) if pulls else []
        if s.sentence.intro and not listed:
            continue  # "The page shows:" without what it shows
        members = [s, *listed]
        new = {_key(m): m for m in members if _key(m) not in units}
        size = sum(len(m.sentence.text) + 1 for m in new.values())
        if units and used + size > max_chars:
            continue
        units.update(new)
        used += size
        if listed:
            listed_from = s.sentence.rank
    return sorted(units.values(), key=_key)


def _pulls_list(sentence: Sentence) -> bool:
    # A table row says all it has to say (a key and its value); an item is part of a whole;
    # a code block goes with the sentence that introduces it.
    return sentence.intro or sentence.kind in (ITEM, STEP, CODE)


def _key(s: Scored) -> tuple[int, int, int]:
    return (s.sentence.rank, s.sentence.line, s.sentence.position)


def _list_of(anchor: Scored, scored: Sequence[Scored]) -> list[Scored]:
    """The run of consecutive list lines of the anchor's chunk that holds (or follows) it;
    for a code block, its introduction; for the introduction of one, the block."""
    if anchor.sentence.kind == CODE:
        return [intro] if (intro := intro_of(anchor, scored)) else []
    if anchor.sentence.intro and (code := code_after(anchor, scored)):
        return [code]
    kinds = frozenset({STEP}) if anchor.sentence.kind == STEP else LISTED
    by_line = {
        s.sentence.line: s
        for s in scored
        if s.sentence.rank == anchor.sentence.rank and s.sentence.kind in kinds
    }
    start = anchor.sentence.line + 1 if anchor.sentence.intro else anchor.sentence.line
    if start not in by_line:
        return []
    # A dropped line (a quoted question, say) inside the list does not end it.
    runs: list[list[int]] = []
    for line in sorted(by_line):
        if runs and line - runs[-1][-1] <= 2:
            runs[-1].append(line)
        else:
            runs.append([line])
    run = [by_line[line] for line in next(r for r in runs if start in r)]
    if len(run) <= MAX_LIST_ITEMS:
        return run
    best = sorted(run, key=lambda s: -s.score)[:MAX_LIST_ITEMS]
    return sorted(best, key=_key)


def shaped_pieces(units: Sequence[Scored], *, max_chars: int) -> list[str]:
    """Paragraphs per source and list lines, as streamed pieces; every sentence cited."""
    pieces: list[str] = []
    previous: Scored | None = None
    number = 0
    for index, s in enumerate(units):
        kind = s.sentence.kind
        announces = _introduces_code(s, units[index + 1 : index + 2])
        if kind == CODE or _headed_row(s) or (announces and kind == PROSE):
            pieces.append(_quoted(s, previous, first=previous is None))
            previous = s
            continue
        # An item announcing a block stays an item, its marker before its colon.
        alias = s.sentence.alias
        text = (
            cite_intro(s.sentence.text, alias)
            if announces
            else cite(clip(s.sentence.text, max_chars), alias)
        )
        same_block = previous is not None and _same_block(previous, s)
        number = number + 1 if kind == STEP and same_block else 1
        if kind == PROSE:
            lead = " " if same_block else "\n\n"
        else:
            lead = "\n" if same_block else "\n\n"
            text = f"{number}. {text}" if kind == STEP else f"- {text}"
        pieces.append(text if previous is None else f"{lead}{text}")
        previous = s
    return pieces


def _introduces_code(s: Scored, following: Sequence[Scored]) -> bool:
    return bool(s.sentence.intro and code_after(s, following))


def _headed_row(s: Scored) -> bool:
    # A row of a chunk that starts below its table's header stays an item "first cell: rest".
    return s.sentence.kind == ROW and "\n" in s.sentence.quoted


def _quoted(s: Scored, previous: Scored | None, *, first: bool) -> str:
    """A code block, its intro or a table row, in the source's own form."""
    lead = "" if first else "\n\n"
    alias = s.sentence.alias
    if s.sentence.kind == CODE:
        introduced = previous is not None and intro_of(s, [previous]) is previous
        block = fenced(s.sentence.quoted or s.sentence.text)
        return f"{lead}{block}" if introduced else f"{lead}{block}\n[{alias}]"
    if s.sentence.kind == PROSE:  # the intro of the block that follows
        lead = "" if first else (" " if previous and _same_block(previous, s) else "\n\n")
        return f"{lead}{cite_intro(s.sentence.text, alias)}"
    return _row(s, previous, lead=lead)


def _row(s: Scored, previous: Scored | None, *, lead: str) -> str:
    """A row under its header; a further row of the same table only adds its own line."""
    *header, row = s.sentence.quoted.split("\n")
    cited = f"{row[:-1].rstrip()} [{s.sentence.alias}] |"
    same_table = (
        previous is not None
        and previous.sentence.kind == ROW
        and previous.sentence.rank == s.sentence.rank
        and previous.sentence.quoted.split("\n")[:-1] == header
    )
    if same_table:
        return f"\n{cited}"
    return lead + "\n".join([*header, cited])


def _same_block(previous: Scored, current: Scored) -> bool:
    a, b = previous.sentence, current.sentence
    if a.rank != b.rank or CODE in (a.kind, b.kind):
        return False
    if a.kind == PROSE and b.kind == PROSE:
        return True
    group = {ITEM: "list", ROW: "list", STEP: "steps"}
    return a.kind != PROSE and group.get(a.kind) == group.get(b.kind)
