"""Build the labelled multi-turn set `manage.py evaluate_conversations` reads.

The public sets under DATASETS may not be copied into the repository (PersianQA is GPL-3.0,
the others non-commercial), so this script derives the conversations from them, always the same
way, into a folder outside it:

    python benchmarks/multiturn_build.py --datasets DATASETS --out /tmp/multiturn

writes OUT/corpus.jsonl (BEIR layout: PersianQA's passages, the first 600 multihop paragraphs
and the pages of docs/guide) and OUT/conversations.jsonl, one conversation a line:
{conversation_id, language, turns: [{text, gold: [corpus ids], follow_up: bool}]}.

- Persian (PersianQA): turn 1 is a question that names the passage's entity; later turns are
  other questions about the same passage with that mention replaced by a pronoun; every third
  conversation switches to the next passage half-way (a question naming the new entity, then a
  follow-up about it).
- English (multihop paragraphs, which carry titles): "What is X?" / "Who is X?" and then
  questions built from what the paragraph states ("directed by" -> "Who directed it?"); every
  fourth conversation switches topic the same way.
- English, the subject named only in the answer (multihop paragraphs that name another
  paragraph's title as their maker: "directed by Otto Preminger"): "Who directed The Moon Is
  Blue?" and then "What else did he direct?" / "When was he born?", whose gold is the maker's
  own paragraph; only the first turn's answer names him. These paragraphs are added to the
  corpus; their follow-ups are marked "subject": "answer".
- English over the project's own guide: hand-written, in benchmarks/data/multiturn_guide.jsonl.
"""

from __future__ import annotations

import argparse
import html
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
GUIDE_CONVERSATIONS = ROOT / "benchmarks" / "data" / "multiturn_guide.jsonl"
MULTIHOP_PARAGRAPHS = 600
ENGLISH_CONVERSATIONS = 90

# Words that open many titles ("باشگاه فوتبال ..."): alone they do not name the entity.
GENERIC_WORDS = frozenset(["باشگاه", "فوتبال", "جام", "سازمان", "دانشگاه", "شهر", "کشور"])

Turn = dict[str, object]
Conversation = dict[str, object]

# (what the paragraph states, the follow-up it allows); person paragraphs use the first group.
PERSON_TEMPLATES = (
    (r"\bborn\b", "When was {he} born?"),
    (r"\bdied\b", "When did {he} die?"),
    (r"\bmarried\b", "Who did {he} marry?"),
    (r"\bplay(?:s|ed) for\b", "Which team did {he} play for?"),
)
THING_TEMPLATES = (
    (r"\bdirected by\b", "Who directed it?"),
    (r"\bstarring\b|\bstars\b", "Who stars in it?"),
    (r"\bwritten by\b", "Who wrote it?"),
    (r"\bpublished (?:in|by)\b", "When was it published?"),
    (r"\breleased (?:in|on)\b", "When was it released?"),
    (r"\blocated in\b", "Where is it located?"),
    (r"\bfounded (?:in|by)\b", "When was it founded?"),
    (r"\bestablished in\b", "And when was it established?"),
    (r"\bcapital of\b", "What is it the capital of?"),
    (r"\bbuilt in\b", "When was it built?"),
)


def jsonl(path: Path) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


# --- Persian -----------------------------------------------------------------------------


def persian_mention(title: str, question: str) -> str | None:
    """The longest run of the title's words that the question contains."""
    words = title.split()
    for size in range(len(words), 0, -1):
        for start in range(len(words) - size + 1):
            span = " ".join(words[start : start + size])
            if len(span) >= 3 and span not in GENERIC_WORDS and span in question:
                return span
    return None


def persian_conversations(dataset: Path) -> list[Conversation]:
    passages = {str(r["_id"]): r for r in jsonl(dataset / "corpus.jsonl")}
    questions: dict[str, list[str]] = {pid: [] for pid in passages}
    for q in jsonl(dataset / "queries.jsonl"):
        if not q.get("is_impossible") and str(q.get("context_id")) in questions:
            questions[str(q["context_id"])].append(str(q["text"]))
    ids = sorted(passages, key=lambda pid: int(pid.removeprefix("pqa_p")))
    out: list[Conversation] = []
    for n, pid in enumerate(ids):
        turns = persian_topic(pid, str(passages[pid]["title"]), questions[pid], follow_ups=3)
        if len(turns) < 2:
            continue
        if n % 3 == 2:
            other = ids[(n + 1) % len(ids)]
            switched = persian_topic(
                other, str(passages[other]["title"]), questions[other], follow_ups=1
            )
            turns = turns[:2] + switched if len(switched) == 2 else turns
        out.append({"conversation_id": f"fa-{pid}", "language": "fa", "turns": turns[:4]})
    return out


def persian_topic(pid: str, title: str, asked: list[str], *, follow_ups: int) -> list[Turn]:
    named = [(q, m) for q in asked if (m := persian_mention(title, q))]
    if not named:
        return []
    person = any(re.search(r"کیست|متولد|به دنیا", q) for q in asked)
    pronoun = "او" if person else "آن"
    first, _ = named[0]
    turns: list[Turn] = [{"text": first, "gold": [pid], "follow_up": False}]
    for question, mention in named[1 : 1 + follow_ups]:
        text = re.sub(r"\s+", " ", question.replace(mention, pronoun, 1)).strip()
        turns.append({"text": text, "gold": [pid], "follow_up": True})
    return turns


# --- English (multihop paragraphs) --------------------------------------------------------


def english_topic(record: dict[str, object]) -> list[Turn]:
    text, title, pid = str(record["text"]), str(record["title"]), str(record["_id"])
    person = re.search(r"\bborn\b", text) is not None
    he = "she" if text.count(" she ") + text.count(" her ") > text.count(" he ") else "he"
    templates = PERSON_TEMPLATES if person else THING_TEMPLATES
    follow = [t.format(he=he) for pattern, t in templates if re.search(pattern, text)]
    if not follow:
        return []
    first = f"Who is {title}?" if person else f"What is {title}?"
    turns: list[Turn] = [{"text": first, "gold": [pid], "follow_up": False}]
    turns.extend({"text": t, "gold": [pid], "follow_up": True} for t in follow[:3])
    return turns


def english_conversations(dataset: Path) -> list[Conversation]:
    records = list(jsonl(dataset / "corpus.jsonl"))[:MULTIHOP_PARAGRAPHS]
    titles = Counter(str(r["title"]) for r in records)
    topics = [
        (str(r["_id"]), turns)
        for r in records
        if titles[str(r["title"])] == 1 and (turns := english_topic(r))
    ]
    out: list[Conversation] = []
    for n, (pid, turns) in enumerate(topics[:ENGLISH_CONVERSATIONS]):
        if n % 4 == 3:
            other = topics[(n + ENGLISH_CONVERSATIONS) % len(topics)][1]
            turns = turns[:2] + other[:2]
        out.append({"conversation_id": f"en-{pid}", "language": "en", "turns": turns[:4]})
    return out


# --- English: the subject only the answer names ----------------------------------------

_NAME = r"(?:the\s+)?([A-Z][\w'.-]*(?:\s+(?:of|de|the|van|von|[A-Z][\w'.-]*))*)"
_MADE_BY = re.compile(
    r"\b(?:(directed|written|created|owned|performed)\s+by"
    r"|(film|novel|book|album|single|play)\s+(?:\w+\s+)?by)\s+" + _NAME
)
# How the first question asks for the maker, and what the follow-up then asks about him.
MAKER_QUESTIONS = {
    "directed": ("Who directed {title}?", "direct"),
    "film": ("Who directed {title}?", "direct"),
    "written": ("Who wrote {title}?", "write"),
    "novel": ("Who wrote {title}?", "write"),
    "book": ("Who wrote {title}?", "write"),
    "play": ("Who wrote {title}?", "write"),
    "created": ("Who created {title}?", "create"),
    "album": ("Who recorded {title}?", "record"),
    "single": ("Who recorded {title}?", "record"),
    "performed": ("Who performed {title}?", "record"),
    "owned": ("Who owns {title}?", "own"),
}


def made_by_links(records: list[dict[str, object]]) -> list[tuple[int, str, int]]:
    """(work index, relation, maker index): a paragraph naming another's title as its maker,
    both titles unique in the corpus; one link a work."""
    titles: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        titles.setdefault(str(record["title"]), []).append(i)
    links: list[tuple[int, str, int]] = []
    for i, record in enumerate(records):
        if len(titles[str(record["title"])]) != 1 or "extended play" in str(record["text"]):
            continue
        link = _made_by(str(record["text"]), str(record["title"]), titles)
        if link and not str(records[link[1]]["text"]).startswith(
            str(records[link[1]]["title"])[:4]
        ):
            continue  # a paragraph from inside the maker's article, not about the maker
        if link:
            links.append((i, link[0], link[1]))
    return links


def _made_by(text: str, title: str, titles: dict[str, list[int]]) -> tuple[str, int] | None:
    for match in _MADE_BY.finditer(text):
        relation = match.group(1) or match.group(2)
        name = match.group(3).split()
        # The longest run of words that is a title; one word of a longer name is another thing
        # ("owned by Red Wolf Broadcasting" is not about the colour red).
        for size in range(len(name), 1 if len(name) > 1 else 0, -1):
            candidate = " ".join(name[:size])
            if candidate != title and len(titles.get(candidate, ())) == 1:
                return relation, titles[candidate][0]
    return None


def maker_pronoun(text: str) -> str:
    def count(*forms: str) -> int:
        return sum(len(re.findall(rf"\b{f}\b", text, re.IGNORECASE)) for f in forms)

    if re.search(r"\b(band|group|duo|studio|company|station|corporation)\b", text):
        return "they" if re.search(r"\b(band|group|duo)\b", text) else "it"
    if count("she", "her") > count("he", "his", "him"):
        return "she"
    person = re.search(r"\bborn\b|\b(director|actor|writer|author|novelist|playwright)\b", text)
    return "he" if count("he", "his", "him") or person else "it"


def answer_subject_conversations(records: list[dict[str, object]]) -> list[Conversation]:
    out: list[Conversation] = []
    for work, relation, maker in made_by_links(records):
        title = re.sub(r"\s*\([^)]*\)$", "", html.unescape(str(records[work]["title"])))
        asked, verb = MAKER_QUESTIONS[relation]
        text = str(records[maker]["text"])
        he = maker_pronoun(text)
        if he in ("he", "she"):
            follow = [f"What else did {he} {verb}?"]
            follow += [f"When was {he} born?"] if re.search(r"\bborn\b", text) else []
        else:
            follow = [f"What else do you know about {'them' if he == 'they' else 'it'}?"]
        gold = [str(records[maker]["_id"])]
        turns: list[Turn] = [
            {
                "text": asked.format(title=title),
                "gold": [str(records[work]["_id"])],
                "follow_up": False,
            }
        ]
        turns += [{"text": t, "gold": gold, "follow_up": True, "subject": "answer"} for t in follow]
        out.append(
            {"conversation_id": f"en-by-{records[work]['_id']}", "language": "en", "turns": turns}
        )
    return out


def answer_subject_records(dataset: Path) -> list[dict[str, object]]:
    """The paragraphs the answer-subject conversations need: each work and its maker."""
    records = list(jsonl(dataset / "corpus.jsonl"))
    wanted = {i for work, _, maker in made_by_links(records) for i in (work, maker)}
    return [records[i] for i in sorted(wanted)]


# --- corpus ---------------------------------------------------------------------------------


def guide_records() -> Iterator[dict[str, object]]:
    for page in sorted(GUIDE.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        title = next((line.lstrip("# ") for line in text.splitlines() if line.startswith("#")), "")
        yield {"_id": f"guide-{page.stem}", "title": title, "text": text}


def corpus_write(datasets: Path, out: Path) -> int:
    count = 0
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        multihop = list(jsonl(datasets / "multihop" / "corpus.jsonl"))[:MULTIHOP_PARAGRAPHS]
        taken = {str(r["_id"]) for r in multihop}
        linked = [
            r for r in answer_subject_records(datasets / "multihop") if str(r["_id"]) not in taken
        ]
        persianqa = list(jsonl(datasets / "persianqa" / "corpus.jsonl"))
        for record in [*persianqa, *multihop, *linked, *guide_records()]:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, required=True, help="the DATASETS folder")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    passages = corpus_write(args.datasets, args.out)
    conversations = [
        *persian_conversations(args.datasets / "persianqa"),
        *english_conversations(args.datasets / "multihop"),
        *answer_subject_conversations(list(jsonl(args.datasets / "multihop" / "corpus.jsonl"))),
        *jsonl(GUIDE_CONVERSATIONS),
    ]
    with (args.out / "conversations.jsonl").open("w", encoding="utf-8") as handle:
        for conversation in conversations:
            handle.write(json.dumps(conversation, ensure_ascii=False) + "\n")
    turns = [t for c in conversations for t in c["turns"]]  # type: ignore[attr-defined]
    follow = sum(bool(t["follow_up"]) for t in turns)
    print(
        f"{passages} passages, {len(conversations)} conversations, "
        f"{len(turns)} turns ({follow} follow-ups) -> {args.out}"
    )


if __name__ == "__main__":
    main()
