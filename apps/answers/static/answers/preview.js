/* The source preview: a citation chip or a source entry opens the cited passage beside the
 * answer (a bottom sheet on narrow screens), with the sentence that supports the answer
 * highlighted, the passages around it, and links to read or download the document.
 *
 * A plain click or tap opens the panel; a modified click (new tab, new window) follows the
 * link, which reads the document in the page. Esc closes the panel and focus returns to the
 * chip that opened it. A fenced code block of the passage is shown as code, with its copy
 * button (code_block.js). Text only ever becomes text nodes.
 */

import { fetchJson, fillUrl, format, localUrl, pageStrings } from "../ragplatform/helpers.js";
import { codeBlockOf, codeSegments } from "./code_block.js";

const panel = document.getElementById("source-panel");
const messages = document.getElementById("messages");
const chat = document.getElementById("chat");
// Every word it shows comes from the page, in the interface language.
const strings = pageStrings();
const $ = (selector) => panel.querySelector(selector);
const state = { opener: null, previous: null, next: null, request: 0 };

/* The passage's text, its fenced code as code blocks, the cited sentence marked: the first
 * node marked (a highlight inside code marks the whole block), or null. */
function passageNodes(text, highlight) {
  const [start, end] = Array.isArray(highlight) && highlight.length === 2 ? highlight : [-1, -1];
  const nodes = [];
  let marked = null;
  for (const segment of codeSegments(text)) {
    const inside = start < segment.end && end > segment.start;
    if (segment.code) {
      const block = codeBlockOf(segment.body);
      if (inside) block.classList.add("cited-sentence");
      nodes.push(block);
      marked ??= inside ? block : null;
      continue;
    }
    if (!inside) {
      nodes.push(segment.body);
      continue;
    }
    const [from, to] = [Math.max(start, segment.start), Math.min(end, segment.end)];
    const mark = document.createElement("mark");
    mark.className = "cited-sentence";
    mark.textContent = text.slice(from, to);
    nodes.push(text.slice(segment.start, from), mark, text.slice(to, segment.end));
    marked ??= mark;
  }
  return { nodes, marked };
}

function renderChunk(chunk, highlight) {
  const box = $(".source-chunk");
  const { nodes, marked } = passageNodes(String(chunk.text ?? ""), highlight);
  box.replaceChildren(...nodes);
  if (marked) requestAnimationFrame(() => marked.scrollIntoView({ block: "nearest" }));
  else box.scrollTop = 0;
  $(".source-heading").textContent = chunk.heading || "";
  $(".source-heading").hidden = !chunk.heading;
  state.previous = localUrl(chunk.previous_url);
  state.next = localUrl(chunk.next_url);
  $(".source-previous").disabled = !state.previous;
  $(".source-next").disabled = !state.next;
  const read = localUrl(chunk.read_url);
  $(".source-open").hidden = !read;
  if (read) $(".source-open").href = read;
}

function renderPreview(preview) {
  $("#source-panel-title").textContent = `[${preview.number ?? ""}] ${preview.title}`;
  const page = preview.chunk.page ? ` · ${strings.page} ${preview.chunk.page}` : "";
  // A passage read from a scan may hold OCR errors: the reader is told, with the confidence.
  const confidence = preview.chunk.ocr_confidence;
  const ocr = confidence == null ? "" : ` · ${format(strings.ocr_read, { score: Math.round(confidence) })}`;
  $(".source-meta").textContent = `${preview.collection} · ${preview.filename}${page}${ocr}`;
  $(".source-download").href = localUrl(preview.download_url) ?? "#";
  renderChunk(preview.chunk, preview.chunk.highlight);
  if (preview.chunk.index < 0) $(".source-heading").textContent = strings.chunk_gone ?? "";
  $(".source-heading").hidden = !$(".source-heading").textContent;
}

function failed() {
  $("#source-panel-title").textContent = strings.preview_failed ?? "";
  $(".source-meta").textContent = "";
  $(".source-chunk").replaceChildren();
  for (const selector of [".source-previous", ".source-next"]) $(selector).disabled = true;
}

async function load(url, render) {
  const request = ++state.request; // a later click wins over a slow earlier answer
  panel.setAttribute("aria-busy", "true");
  try {
    const body = await fetchJson(url);
    if (request === state.request) render(body);
  } catch {
    if (request === state.request) failed();
  } finally {
    if (request === state.request) panel.removeAttribute("aria-busy");
  }
}

function open(link) {
  const turn = link.closest("li.turn")?.dataset.turn;
  if (!turn) return false;
  state.opener = link;
  panel.hidden = false;
  document.body.classList.add("source-open");
  $(".source-panel-close").focus();
  load(fillUrl(chat.dataset.sourceUrl, turn, link.dataset.alias), renderPreview);
  return true;
}

function close() {
  if (panel.hidden) return;
  panel.hidden = true;
  document.body.classList.remove("source-open");
  state.opener?.focus();
  state.opener = null;
}

messages.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-alias]");
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  if (open(link)) event.preventDefault();
});
$(".source-panel-close").addEventListener("click", close);
$(".source-previous").addEventListener("click", () => state.previous && load(state.previous, renderChunk));
$(".source-next").addEventListener("click", () => state.next && load(state.next, renderChunk));
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !panel.hidden) {
    event.preventDefault();
    close();
  }
});
