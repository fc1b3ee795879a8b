/* One turn on the chat page: its events become DOM nodes, appended as they arrive.
 *
 * Safety: answer text only ever becomes text nodes (answer_writer.js builds the elements
 * itself). The one innerHTML is a search snippet, and only after sanitizeMarkHtml(), which keeps
 * text and <mark> and nothing else.
 */

import { el, fillUrl, format, localUrl, pageStrings, show } from "../ragplatform/helpers.js";
import { AnswerWriter, writeAnswer } from "./answer_writer.js";

// Every word shown comes from the template, in the interface language.
const STRINGS = pageStrings();
const chat = document.getElementById("chat");

/* Search snippets arrive as escaped text with <mark> tags. Keep exactly those two tags;
 * every other "<", ">" or quote is escaped, so nothing else can become markup. */
export function sanitizeMarkHtml(html) {
  const escapes = { "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  return String(html)
    .split(/(<\/?mark>)/i)
    .map((piece, i) => (i % 2 ? piece.toLowerCase() : piece.replace(/[<>"']/g, (c) => escapes[c])))
    .join("");
}

function pageNote(page) {
  return `${STRINGS.page} ${page}`;
}

function chipNode(chip) {
  const url = localUrl(chip.url);
  const node = el(url ? "a" : "span", String(chip.number), "chip");
  if (url) node.href = url;
  if (chip.alias) node.dataset.alias = chip.alias; // preview.js opens this source
  const page = chip.page ? `, ${pageNote(chip.page)}` : "";
  const snippet = chip.snippet ? ` — ${String(chip.snippet).slice(0, 200)}` : "";
  node.title = `${chip.title || STRINGS.source}${page}${snippet}`;
  return node;
}

export function newView(template, question) {
  const li = template.content.firstElementChild.cloneNode(true);
  li.querySelector(".question").textContent = question;
  li.dataset.status = "streaming";
  const view = viewOf(li);
  view.answer.setAttribute("aria-busy", "true"); // written to until end()
  return view;
}

export function viewOf(li) {
  const textEl = li.querySelector(".answer-text");
  return {
    el: li,
    answer: li.querySelector(".answer"),
    textEl,
    writer: new AnswerWriter(textEl),
    turn: li.dataset.turn ? Number(li.dataset.turn) : null,
    lastSeq: 0,
    aliases: new Map(),
    ended: false,
  };
}

/** A past turn the server rendered as plain text with chips, upgraded to rich text. */
export function upgradeStored(view, stored) {
  writeAnswer(view.textEl, stored.answer, stored.citations, chipNode);
}

/** Reloaded mid-answer: the answer is replayed from the start onto an empty bubble. */
export function resetForReplay(view) {
  view.textEl.replaceChildren();
  view.writer = new AnswerWriter(view.textEl);
  for (const selector of [".sources", ".results", ".followups", ".clarification", ".badge", ".notice"]) {
    const node = part(view, selector);
    if (selector !== ".badge") node.replaceChildren();
    show(node, false);
  }
  view.answer.classList.add("streaming");
  view.answer.setAttribute("aria-busy", "true");
  showProgress(view, "searching");
}

/** What the answer waits for before its first words ("searching", "writing"); null: nothing
 * more, its text or its end has come. */
export function showProgress(view, stage) {
  const node = part(view, ".progress");
  if (!node) return;
  const words = { searching: STRINGS.searching, writing: STRINGS.writing }[stage];
  node.textContent = words ?? "";
  node.dataset.stage = words ? stage : "";
  show(node, Boolean(words));
}

export function endView(view) {
  showProgress(view, null);
  view.ended = true;
  view.writer.end();
  view.answer.classList.remove("streaming");
  view.answer.removeAttribute("aria-busy");
}

function part(view, selector) {
  return view.el.querySelector(selector);
}

export function notice(view, message, isError) {
  const node = part(view, ".notice");
  node.textContent = message;
  node.classList.toggle("error", Boolean(isError));
  show(node, Boolean(message));
}

function sourceLink(url, title, alias) {
  const link = el(url ? "a" : "span", title);
  if (url) link.href = url;
  if (alias) link.dataset.alias = alias;
  return link;
}

function addSource(view, chip) {
  const sources = part(view, ".sources");
  const item = el("li");
  item.value = chip.number;
  item.dir = "auto";
  item.append(sourceLink(localUrl(chip.url), chip.title || STRINGS.source, chip.alias));
  if (chip.page) item.append(" ", el("span", pageNote(chip.page), "page"));
  sources.append(item);
  show(sources, true);
}

function resultItem(result) {
  const item = el("li");
  item.dir = "auto";
  item.append(sourceLink(localUrl(result.url), result.title));
  if (result.page) item.append(" ", el("span", pageNote(result.page), "page"));
  const score = el("span", Number(result.score).toFixed(2), "score");
  score.title = STRINGS.relevance;
  item.append(" ", score);
  const snippet = el("p", null, "snippet");
  snippet.innerHTML = sanitizeMarkHtml(result.snippet_html ?? "");
  item.append(snippet);
  return item;
}

function renderResults(view, data) {
  // Weak matches are never listed as if they matched: they go under their own label, after
  // a sentence saying that nothing matches when none does.
  const results = data.results || [];
  const strong = results.filter((r) => !r.weak);
  const weak = results.filter((r) => r.weak);
  const list = part(view, ".results");
  list.replaceChildren(...strong.map(resultItem));
  show(list, strong.length > 0);
  const box = part(view, ".weak-matches");
  const nothing = data.matched === false ? `${format(STRINGS.nothing_matches, { query: data.query ?? "" })} ` : "";
  box.querySelector(".weak-note").textContent = nothing + STRINGS.weak_matches;
  box.querySelector(".results-weak").replaceChildren(...weak.map(resultItem));
  show(box, weak.length > 0);
  if (!results.length) notice(view, STRINGS.no_results);
}

function renderFollowups(view, questions) {
  const box = part(view, ".followups");
  box.replaceChildren(...questions.map((q) => {
    const button = el("button", q, "followup");
    button.type = "button";
    button.dir = "auto";
    return button;
  }));
  show(box, questions.length > 0);
}

function addCitation(view, data) {
  if (view.aliases.has(data.alias)) return;
  const documentUrl = Number.isInteger(data.document) ? fillUrl(chat.dataset.documentUrl, data.document) : null;
  const chip = {
    number: view.aliases.size + 1,
    alias: data.alias,
    url: documentUrl, // reads the document in the page; a plain click opens the preview
    title: data.title || data.source_file,
    page: data.page,
    snippet: data.snippet,
  };
  view.aliases.set(data.alias, chip);
  view.writer.cite(chipNode(chip)); // a citation arrives right after the text it supports
  addSource(view, chip);
}

function showConfidence(view, data) {
  // Words a person understands; the score stays available on hover and to screen readers.
  const badge = part(view, ".badge");
  const words = { green: STRINGS.well_supported, yellow: STRINGS.partly_supported, red: STRINGS.not_supported };
  const score = format(STRINGS.support_score, { score: Number(data.value).toFixed(2) });
  badge.querySelector(".badge-words").textContent = words[data.band] ?? "";
  badge.querySelector(".badge-score").textContent = ` (${score})`;
  badge.title = score;
  badge.className = `badge band-${data.band}`;
  show(badge, true);
}

/** What a turn's event does to its view; the end returns the words the status region says. */
export const HANDLERS = {
  progress(view, data) {
    showProgress(view, data.stage);
  },
  token(view, data) {
    showProgress(view, null);
    view.writer.write(data.text);
  },
  citation: addCitation,
  search_results(view, data) {
    renderResults(view, data);
  },
  clarification(view, data) {
    const box = part(view, ".clarification");
    box.textContent = data.question;
    show(box, true);
  },
  confidence: showConfidence,
  followups(view, data) {
    renderFollowups(view, data.questions || []);
  },
  finished(view, data) {
    view.writer.end();
    if (data.action === "clarify") view.textEl.replaceChildren(); // the question shows instead
    notice(view, "");
    view.el.dataset.status = "finished";
    return STRINGS.answer_done;
  },
  failed(view, data) {
    const stopped = data.code === "cancelled";
    notice(view, stopped ? STRINGS.stopped : data.message, !stopped);
    view.el.dataset.status = stopped ? "cancelled" : "failed";
    return stopped ? STRINGS.stopped : format(STRINGS.answer_failed, { message: data.message ?? "" });
  },
};
