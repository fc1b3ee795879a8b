/* The embeddable answer widget: one classic script tag on any listed intranet page.
 *
 *   <script src="https://answers.example.org/widget/widget.js"
 *           data-key="PUBLISHABLE-KEY" data-collections="Handbook" defer></script>
 *
 * Served by apps/reach/widget/views.py `widget_script`, which fills CONFIG below: the words in
 * the asker's language (translated like the chat page's) and the address it asks.
 *
 * It asks POST /widget/ask on the script's own origin (no cookies: the key and the page's
 * origin are the credentials, docs/guide/16-other-clients), reads the answer's typed events as
 * they stream, and shows the text with numbered source links and the confidence band. Its
 * nodes live in a shadow root, so the host page's styles and the widget's never mix; all text
 * is set with textContent, never as HTML.
 */
(() => {
  "use strict";
  const CONFIG = {{ config|safe }};
  const WORDS = CONFIG.words;

  const script = document.currentScript;
  if (!script) return; // loaded as a module or injected late: there is no tag to read
  const platform = new URL(script.src).origin;
  const key = script.dataset.key || "";
  const collections = (script.dataset.collections || "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const title = script.dataset.title || WORDS.title;
  const BAND_WORDS = WORDS.bands;

  const STYLE = `
    :host { all: initial; font: 14px/1.45 system-ui, sans-serif; color-scheme: light dark; }
    .panel { --fg: #1c1c1c; --bg: #fff; --line: #ccd; --accent: #2455c3; color: var(--fg);
      background: var(--bg); border: 1px solid var(--line); border-radius: 8px; padding: 12px;
      max-width: 32rem; margin-top: 6px; }
    @media (prefers-color-scheme: dark) {
      .panel { --fg: #eee; --bg: #1e1f24; --line: #444a; --accent: #8fb0ff; } }
    .panel.dark { --fg: #eee; --bg: #1e1f24; --line: #444a; --accent: #8fb0ff; }
    form { display: flex; gap: 6px; }
    input { flex: 1; font: inherit; padding: 4px 6px; }
    button { font: inherit; cursor: pointer; }
    .answer { white-space: pre-wrap; margin: 10px 0 4px; }
    .answer[aria-busy="true"]::after { content: "\\2026"; }
    a { color: var(--accent); }
    .marker { font-size: 0.8em; vertical-align: super; text-decoration: none; margin: 0 1px; }
    .sources { margin: 6px 0 0; padding-inline-start: 1.4em; font-size: 0.92em; }
    .badge { display: inline-block; font-size: 0.85em; padding: 1px 8px; border-radius: 10px; }
    .band-green { background: #d9f2df; color: #14532d; }
    .band-yellow { background: #fbefc5; color: #6b4e00; }
    .band-red { background: #f8d7d7; color: #7f1d1d; }
    .error { color: #b42318; }
    [hidden] { display: none !important; }
  `;

  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, props);
    node.append(...children);
    return node;
  }

  const host = el("div", { className: "rag-answer-widget" });
  script.after(host);
  const root = host.attachShadow({ mode: "open" });
  const toggle = el("button", { type: "button", textContent: title });
  toggle.setAttribute("aria-expanded", "false");
  const input = el("input", { type: "text", name: "question", id: "question" });
  const label = el("label", { htmlFor: "question", textContent: WORDS.question });
  const ask = el("button", { type: "submit", textContent: WORDS.ask });
  const form = el("form", {}, label, input, ask);
  const answer = el("div", { className: "answer" });
  answer.setAttribute("aria-live", "polite");
  const badge = el("span", { className: "badge", hidden: true });
  const sources = el("ol", { className: "sources" });
  sources.setAttribute("aria-label", WORDS.sources);
  const error = el("p", { className: "error", hidden: true });
  error.setAttribute("role", "alert");
  const panel = el("section", { className: "panel", hidden: true }, form, answer, badge, sources, error);
  panel.setAttribute("aria-label", title);
  // The host page's direction and theme, as it declares them.
  panel.dir = document.documentElement.dir || document.body.dir || "auto";
  const theme = document.documentElement.dataset.theme || document.documentElement.className;
  if (/\bdark\b/.test(theme)) panel.classList.add("dark");
  root.append(el("style", { textContent: STYLE }), toggle, panel);

  toggle.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    toggle.setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) input.focus();
  });

  function reset() {
    answer.replaceChildren();
    sources.replaceChildren();
    badge.hidden = true;
    error.hidden = true;
  }

  function fail(message) {
    error.textContent = message;
    error.hidden = false;
    answer.setAttribute("aria-busy", "false");
  }

  function marker(number, url) {
    const link = el("a", { className: "marker", textContent: `[${number}]` });
    if (url) {
      link.href = url;
      link.target = "_blank";
      link.rel = "noopener";
    }
    link.dataset.number = String(number);
    return link;
  }

  function showConfidence(confidence) {
    if (!confidence || !confidence.band) return;
    badge.className = `badge band-${confidence.band}`;
    badge.textContent = `${BAND_WORDS[confidence.band] || confidence.band} (${Math.round(confidence.value * 100)}%)`;
    badge.hidden = false;
  }

  // The stored answer replaces what streamed: the same words, with every marker a link.
  function showReply(data) {
    const urls = new Map(data.sources.map((s) => [String(s.number), s.url]));
    answer.replaceChildren();
    const parts = data.answer.split(/\[(\d+)\]/);
    parts.forEach((part, i) => {
      if (i % 2 === 0) answer.append(part);
      else answer.append(urls.has(part) ? marker(part, urls.get(part)) : `[${part}]`);
    });
    sources.replaceChildren(
      ...data.sources.map((s) => {
        const where = [s.source_file, s.page ? `page ${s.page}` : ""].filter(Boolean).join(", ");
        const name = s.url ? el("a", { href: s.url, target: "_blank", rel: "noopener", textContent: s.title }) : s.title;
        return el("li", {}, name, where ? ` (${where})` : "");
      }),
    );
    showConfidence(data.confidence);
    answer.setAttribute("aria-busy", "false");
  }

  const HANDLERS = {
    token: (data) => answer.append(data.text),
    citation: (data) => data.number && answer.append(marker(data.number, "")),
    clarification: (data) => answer.append(data.question || ""),
    confidence: showConfidence,
    failed: (data) => fail(data.message || WORDS.failed),
    reply: showReply,
  };

  function dispatch(block) {
    let type = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) type = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (!data.length || !HANDLERS[type]) return; // pings and events the widget does not show
    HANDLERS[type](JSON.parse(data.join("\n")).data);
  }

  async function read(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    answer.setAttribute("aria-busy", "false");
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    reset();
    answer.setAttribute("aria-busy", "true");
    ask.disabled = true;
    try {
      const response = await fetch(`${platform}${CONFIG.ask_path}`, {
        method: "POST",
        mode: "cors",
        credentials: "omit",
        headers: { "Content-Type": "application/json", "X-Widget-Key": key },
        body: JSON.stringify({ question: input.value, collections }),
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        fail((body.error && body.error.message) || WORDS.refused.replace("%(status)s", response.status));
      } else {
        await read(response);
      }
    } catch (exc) {
      fail(WORDS.unreachable);
    } finally {
      ask.disabled = false;
    }
  });
})();
