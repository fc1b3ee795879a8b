/* The answer's Markdown, written as it streams: paragraphs, lists, tables, headings, **bold**,
 * fenced code blocks and citation chips. Every piece of text is appended where the stream has got to; nothing
 * written is rendered again, so a long answer costs what its text costs, and a screen reader
 * is not handed the whole answer on every token.
 *
 * A line's kind is known from its first few characters ("- ", "1. ", "## ", "|"): until then
 * they wait, as does a lone "*" that may open **bold** and the spaces at a table cell's end.
 * The few decisions only later text can make change nodes already written, once: the first
 * table row's cells become headers when the rule under them arrives, and a "**" never closed
 * on its line is unwrapped back into the text. Text only ever becomes text nodes.
 *
 * A line of three or more backticks opens a code block (code_block.js: <pre><code> and a copy
 * button): every line up to a fence as long is its text, as written, with no markup read in it.
 */

import { el } from "../ragplatform/helpers.js";
import { codeBlock } from "./code_block.js";

const SPACE = /\s/;
const RULE_CHAR = /[\s|:-]/;
const LIST = { "-": "ul", "*": "ul", "•": "ul" };
const PLAIN = "p";
const MORE = "more";

/* What a line's first characters make of it: {kind, rest}, or null while more could change
 * it. `settle` says why it must be decided now: "end" (the line ended) or "chip" (a citation
 * came first); a line still open then is a paragraph, and one of only spaces is blank unless a
 * chip is on it. */
function lineKind(head, settle) {
  const start = head.search(/\S/);
  if (start < 0) return settle ? { kind: settle === "end" ? "blank" : PLAIN, rest: head } : null;
  const s = head.slice(start);
  if (s[0] === "|") return { kind: "table", rest: s.slice(1) };
  if (s[0] === "`") return fence(s, settle);
  const marker = LIST[s[0]] ? ["ul", 1] : numbered(s) ?? heading(s);
  const plain = { kind: PLAIN, rest: head };
  if (marker === MORE) return settle ? plain : null;
  if (!Array.isArray(marker)) return plain;
  const [kind, length] = marker;
  if (s.length === length) return settle ? plain : null;
  return SPACE.test(s[length]) ? { kind, rest: s.slice(length + 1) } : plain;
}

// "```": a code block opens; fewer backticks are text. Its fence is the line's backticks.
function fence(s, settle) {
  const ticks = /^`*/.exec(s)[0].length;
  if (ticks < 3) return ticks === s.length && !settle ? null : { kind: PLAIN, rest: s };
  if (ticks === s.length && !settle) return null; // the fence may grow
  return { kind: "code", rest: "", fence: s.slice(0, ticks), info: s.slice(ticks), ended: settle === "end" };
}

function numbered(s) {
  const digits = /^\d+/.exec(s)?.[0].length;
  if (!digits) return null;
  if (s.length === digits) return MORE;
  return ".)".includes(s[digits]) ? ["ol", digits + 1] : PLAIN;
}

function heading(s) {
  const hashes = /^#+/.exec(s)?.[0].length;
  if (!hashes) return null;
  return hashes <= 4 ? ["h3", hashes] : PLAIN;
}

export class AnswerWriter {
  constructor(container) {
    this.container = container;
    this.block = null; // the open block: p, ul, ol, h3 or table
    this.kind = null;
    this.target = null; // where inline text goes: the block, an li, a cell or a strong
    this.run = ""; // text not yet appended to target
    this.head = ""; // the current line's first characters, while its kind is unknown
    this.lineStart = true;
    this.joinLine = false; // a paragraph's line ended: the next may continue it
    this.skipSpace = false; // after a list or heading marker
    this.star = false; // a "*" that may be half of "**"
    this.strong = null;
    this.code = null; // the open code block: {fence, info, line, newlines}
  }

  /** Appends the next piece of the answer. */
  write(text) {
    for (const c of String(text)) this.#char(c);
    this.#flush();
  }

  /** Places a citation chip where the answer has got to. */
  cite(node) {
    if (!this.code && this.lineStart) this.#settleHead("chip");
    if (this.code) {
      this.#flush(); // a chip is never sent inside code; kept where it came if it is
      return this.target.append(node);
    }
    if (this.kind === "table") this.#cellContent();
    this.skipSpace = false;
    this.#settleStar();
    this.#flush();
    this.target.append(node);
  }

  /** The answer is complete: whatever waited is written as it stands. */
  end() {
    if (this.code) this.#codeEnd();
    if (this.lineStart) this.#settleHead("end");
    if (!this.lineStart) this.#lineEnd();
    this.#closeBlock();
  }

  // --- lines and blocks ------------------------------------------------------------------

  #char(c) {
    if (this.code) return this.#codeChar(c);
    if (this.lineStart) {
      if (c === "\n") {
        this.#settleHead("end");
        if (this.lineStart) return; // a blank line
        return this.#lineEnd();
      }
      this.head += c;
      return this.#settleHead(null);
    }
    if (c === "\n") return this.#lineEnd();
    if (this.kind === "table") return this.#tableChar(c);
    this.#inline(c);
  }

  #settleHead(settle) {
    const found = lineKind(this.head, settle);
    if (!found) return;
    this.head = "";
    if (found.kind === "blank") return this.#beginLine("blank"); // the next line starts afresh
    if (found.kind === "code") return this.#codeOpen(found);
    this.lineStart = false;
    this.#beginLine(found.kind);
    for (const c of found.rest) this.#char(c);
  }

  #beginLine(kind) {
    const continues = kind === "p" && this.kind === "p" && this.joinLine;
    this.joinLine = false;
    if (continues) return this.#out("\n");
    if (kind === "blank") return this.#closeBlock();
    if (kind !== this.kind || kind === "p" || kind === "h3") this.#openBlock(kind);
    if (kind === "ul" || kind === "ol") {
      this.target = this.block.appendChild(el("li"));
      this.target.dir = "auto";
    }
    if (kind === "table") this.#tableLine();
    this.skipSpace = kind !== "p" && kind !== "table";
  }

  #openBlock(kind) {
    this.#closeBlock();
    this.kind = kind;
    this.block = this.container.appendChild(el(kind));
    this.block.dir = "auto"; // a list's markers sit on the side its items read from
    this.target = this.block;
    if (kind === "table") this.rows = { lines: 0, first: null };
  }

  #closeBlock() {
    if (!this.block) return;
    this.#settleInline();
    this.block = this.kind = this.target = null;
    this.joinLine = false;
  }

  #lineEnd() {
    if (this.kind === "table") this.#tableLineEnd();
    this.#settleInline(); // **bold** does not cross a line
    this.lineStart = true;
    if (this.kind === "p") this.joinLine = true;
    else if (this.kind === "h3") this.#closeBlock();
    else this.#flush();
  }

  // --- inline: text, **bold** -------------------------------------------------------------

  #inline(c) {
    if (this.skipSpace && SPACE.test(c)) return;
    this.skipSpace = false;
    if (this.star) {
      this.star = false;
      if (c === "*") return this.#boldMark();
      this.#loneStar();
    }
    if (c === "*") this.star = true;
    else this.#out(c);
  }

  #boldMark() {
    this.#flush();
    if (!this.strong) {
      this.strong = this.target.appendChild(el("strong"));
      this.target = this.strong;
    } else if (this.#strongEmpty()) {
      this.strong.before("**"); // "****": the first pair was text, the second opens
    } else {
      this.target = this.strong.parentNode;
      this.strong = null;
    }
  }

  // A "*" alone: text. Inside **bold** it breaks it (bold holds no "*"), unless the bold is still
  // empty, when the opening pair moves one character on ("***x**" is "*" and bold "x").
  #loneStar() {
    if (this.strong && this.#strongEmpty()) {
      this.strong.before("*");
      return;
    }
    if (this.strong) this.#unwrapStrong();
    this.#out("*");
  }

  #strongEmpty() {
    return !this.run && !this.strong.hasChildNodes(); // the run, if any, is the strong's text
  }

  #settleStar() {
    if (!this.star) return;
    this.star = false;
    this.#loneStar();
  }

  #settleInline() {
    this.#settleStar();
    this.#flush();
    if (this.strong) this.#unwrapStrong();
  }

  #unwrapStrong() {
    this.#flush();
    const strong = this.strong;
    this.target = strong.parentNode;
    this.strong = null;
    strong.replaceWith("**", ...strong.childNodes); // the nodes move; none is made again
  }

  #out(text) {
    this.run += text;
  }

  #flush() {
    if (!this.run) return;
    this.target.append(this.run);
    this.run = "";
  }

  // --- code: "```" lines around text written as is ------------------------------------------

  #codeOpen(found) {
    this.#closeBlock();
    const { block, code } = codeBlock();
    this.container.append(block);
    // `line`: the current line while it could still be the closing fence; `newlines`: line
    // ends not yet written (a last one before the fence is not part of the code).
    this.code = { fence: found.fence, info: !found.ended, line: "", newlines: 0 };
    this.target = code;
    for (const c of found.info) this.#codeChar(c);
  }

  #codeChar(c) {
    const code = this.code;
    if (code.info) {
      if (c === "\n") code.info = false; // the rest of the opening line names the language
      return;
    }
    if (c === "\n") {
      if (code.line !== null && this.#closesCode(code.line)) return this.#codeClose();
      this.#codeText(code.line ?? "");
      code.line = "";
      code.newlines += 1;
      return;
    }
    if (code.line !== null) {
      code.line += c;
      if (/^ {0,3}`*$/.test(code.line)) return; // still maybe the closing fence
      c = code.line;
      code.line = null;
    }
    this.#codeText(c);
  }

  #closesCode(line) {
    const ticks = line.trim();
    return /^`+$/.test(ticks) && ticks.length >= this.code.fence.length;
  }

  #codeText(text) {
    if (!text) return;
    const code = this.code;
    if (code.newlines > 0) text = "\n".repeat(code.newlines) + text;
    code.newlines = 0;
    this.#out(text); // written as the run is, once per piece
  }

  #codeClose() {
    this.#flush();
    this.code = this.target = null;
    this.lineStart = true;
    this.head = "";
  }

  #codeEnd() {
    // The answer ended inside the block: what waited is code too.
    if (this.code.line && !this.#closesCode(this.code.line)) this.#codeText(this.code.line);
    this.#codeClose();
  }

  // --- tables: "| a | b |" rows, a "|---|" rule under the first makes it the header ----------

  #tableLine() {
    this.rule = ""; // the line so far, while it could still be a rule
    this.cellOpen = false;
    this.space = "";
    this.row = null;
  }

  #tableChar(c) {
    if (this.rule !== null && RULE_CHAR.test(c)) {
      this.rule += c;
      return;
    }
    this.#contentRow();
    if (c === "|") return this.#cellEnd();
    if (SPACE.test(c)) {
      if (this.cellOpen) {
        this.#settleStar();
        this.space += c; // a cell's last spaces are dropped, as its first are
      }
      return;
    }
    this.#cellContent();
    this.#inline(c);
  }

  // The line holds more than a rule could: it is a row, and what waited is its text.
  #contentRow() {
    if (this.rule === null) return;
    const waited = this.rule;
    this.rule = null;
    this.row = this.block.appendChild(el("tr"));
    if (this.rows.lines === 0) this.rows.first = this.row;
    for (const c of waited) this.#tableChar(c);
  }

  #cellContent() {
    this.#contentRow();
    if (!this.cellOpen) {
      this.#flush();
      this.target = this.row.appendChild(el("td"));
      this.cellOpen = true;
    }
    this.#out(this.space);
    this.space = "";
  }

  #cellEnd() {
    if (!this.cellOpen) this.#cellContent(); // "||": an empty cell
    this.#settleInline();
    this.space = "";
    this.cellOpen = false;
  }

  #tableLineEnd() {
    if (this.rule !== null && this.rule.includes("-")) {
      if (this.rows.lines === 1 && this.rows.first) this.#headerRow(this.rows.first);
    } else {
      this.#contentRow();
      if (!this.row.cells.length) this.#cellContent();
    }
    this.#settleInline();
    this.rows.lines += 1;
    this.#tableLine();
    this.target = this.block;
  }

  #headerRow(row) {
    for (const td of [...row.cells]) {
      const th = el("th");
      th.append(...td.childNodes);
      td.replaceWith(th);
    }
  }
}

/** A stored answer written in one go, with its chips at their offsets, as the stream would. */
export function writeAnswer(container, text, chips, chipNode) {
  container.replaceChildren();
  const writer = new AnswerWriter(container);
  const at = (chip) => Math.min(Math.max(chip.offset ?? text.length, 0), text.length);
  const placed = chips.map((chip, i) => [at(chip), i, chip]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let written = 0;
  for (const [offset, , chip] of placed) {
    writer.write(text.slice(written, offset));
    writer.cite(chipNode(chip));
    written = offset;
  }
  writer.write(text.slice(written));
  writer.end();
  return writer;
}
