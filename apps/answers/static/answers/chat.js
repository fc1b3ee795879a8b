/* The chat page: one WebSocket, a turn's typed events in, DOM nodes out.
 *
 * Safety: answer text only ever becomes text nodes (a tiny Markdown renderer builds the
 * elements itself). The one innerHTML is a search snippet, and only after sanitizeMarkHtml(),
 * which keeps text and <mark> and nothing else.
 */
(() => {
  "use strict";

  const chat = document.getElementById("chat");
  if (!chat) return;
  const messages = document.getElementById("messages");
  const form = document.getElementById("ask-form");
  const input = document.getElementById("question");
  const stopButton = document.getElementById("stop-button");
  const connection = document.getElementById("connection");
  const template = document.getElementById("turn-template");
  // Every word the page shows comes from the template, in the interface language.
  const STRINGS = JSON.parse(document.getElementById("chat-strings")?.textContent || "{}");

  const state = {
    socket: null,
    conversation: chat.dataset.conversation || null,
    pending: null, // the view of a question sent but not yet accepted
    current: null, // the view whose answer is streaming
    views: new Map(), // turn id -> view
    retries: 0,
  };

  // --- small DOM helpers -------------------------------------------------------------

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text != null) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function part(view, selector) {
    return view.el.querySelector(selector);
  }

  function show(node, visible) {
    node.hidden = !visible;
  }

  function localUrl(url) {
    // Only same-origin paths become links; anything else is inert.
    return typeof url === "string" && /^\/(?!\/)/.test(url) ? url : null;
  }

  function sourceUrl(documentId) {
    // Reads the document in the page; a plain click opens the preview panel instead.
    return Number.isInteger(documentId) ? `/documents/${documentId}/read/` : null;
  }

  function nearBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 80;
  }

  function follow(wasNearBottom) {
    if (wasNearBottom) messages.scrollTop = messages.scrollHeight;
  }

  /* Search snippets arrive as escaped text with <mark> tags. Keep exactly those two tags;
   * every other "<", ">" or quote is escaped, so nothing else can become markup. */
  function sanitizeMarkHtml(html) {
    const escapes = { "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
    return String(html)
      .split(/(<\/?mark>)/i)
      .map((piece, i) => (i % 2 ? piece.toLowerCase() : piece.replace(/[<>"']/g, (c) => escapes[c])))
      .join("");
  }

  // --- a tiny Markdown renderer: paragraphs, lists, tables, headings, **bold**, chips -------

  const MARK = "\uE000"; // a private-use character: never in real answer text
  const CHIP = new RegExp(`${MARK}([\\uE100-\\uEFFF])|\\*\\*([^*\\n]+?)\\*\\*`, "g");
  const BULLET = /^\s*[-*•]\s+/;
  const NUMBERED = /^\s*\d+[.)]\s+/;
  const HEADING = /^\s*#{1,4}\s+/;
  const TABLE = /^\s*\|/;

  function withChipMarks(text, chips) {
    // Insert from the last offset backwards, so earlier offsets stay valid.
    const placed = chips.map((chip, i) => [Math.min(Math.max(chip.offset ?? text.length, 0), text.length), i]);
    placed.sort((a, b) => b[0] - a[0] || b[1] - a[1]);
    let out = text;
    for (const [at, i] of placed) out = out.slice(0, at) + MARK + String.fromCharCode(0xe100 + i) + out.slice(at);
    return out;
  }

  function chipNode(chip) {
    const url = localUrl(chip.url);
    const node = el(url ? "a" : "span", String(chip.number), "chip");
    if (url) node.href = url;
    if (chip.alias) node.dataset.alias = chip.alias; // preview.js opens this source
    const page = chip.page ? `, p. ${chip.page}` : "";
    const snippet = chip.snippet ? ` — ${String(chip.snippet).slice(0, 200)}` : "";
    node.title = `${chip.title || "Source"}${page}${snippet}`;
    return node;
  }

  function inline(node, text, chips) {
    let last = 0;
    for (const match of text.matchAll(CHIP)) {
      if (match.index > last) node.append(text.slice(last, match.index));
      if (match[1] !== undefined) {
        const chip = chips[match[1].charCodeAt(0) - 0xe100];
        if (chip) node.append(chipNode(chip));
      } else {
        inline(node.appendChild(el("strong")), match[2], chips);
      }
      last = match.index + match[0].length;
    }
    if (last < text.length) node.append(text.slice(last));
    return node;
  }

  function block(tag, text, chips) {
    const node = inline(el(tag), text, chips);
    node.dir = "auto";
    return node;
  }

  function cells(row) {
    return row.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  }

  function table(rows, chips) {
    const isRule = (row) => /^[\s|:-]+$/.test(row) && row.includes("-");
    const hasHead = rows.length > 1 && isRule(rows[1]);
    const node = el("table");
    node.dir = "auto";
    rows.forEach((row, i) => {
      if (isRule(row)) return;
      const tr = node.appendChild(el("tr"));
      for (const cell of cells(row)) tr.append(inline(el(hasHead && i === 0 ? "th" : "td"), cell, chips));
    });
    return node;
  }

  function list(tag, items, marker, chips) {
    const node = el(tag);
    node.dir = "auto"; // the markers sit on the side the items read from
    for (const item of items) node.append(block("li", item.replace(marker, ""), chips));
    return node;
  }

  function renderRich(container, text, chips) {
    const lines = withChipMarks(text, chips).split("\n");
    const special = (line) => TABLE.test(line) || BULLET.test(line) || NUMBERED.test(line) || HEADING.test(line);
    const take = (test) => {
      const taken = [];
      while (i < lines.length && test(lines[i])) taken.push(lines[i++]);
      return taken;
    };
    const out = document.createDocumentFragment();
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) i++;
      else if (TABLE.test(line)) out.append(table(take((l) => TABLE.test(l)), chips));
      else if (BULLET.test(line)) out.append(list("ul", take((l) => BULLET.test(l)), BULLET, chips));
      else if (NUMBERED.test(line)) out.append(list("ol", take((l) => NUMBERED.test(l)), NUMBERED, chips));
      else if (HEADING.test(line)) out.append(block("h3", lines[i++].replace(HEADING, ""), chips));
      else out.append(block("p", take((l) => l.trim() && !special(l)).join("\n"), chips));
    }
    container.replaceChildren(out);
  }

  // --- one turn on the page ------------------------------------------------------------

  function newView(question) {
    const li = template.content.firstElementChild.cloneNode(true);
    li.querySelector(".question").textContent = question;
    li.dataset.status = "streaming";
    document.getElementById("empty")?.remove();
    messages.appendChild(li);
    messages.scrollTop = messages.scrollHeight;
    return viewOf(li);
  }

  function viewOf(li) {
    return {
      el: li,
      answer: li.querySelector(".answer"),
      textEl: li.querySelector(".answer-text"),
      turn: li.dataset.turn ? Number(li.dataset.turn) : null,
      lastSeq: 0,
      text: "",
      chips: [],
      aliases: new Map(),
      ended: false,
    };
  }

  function notice(view, message, isError) {
    const node = part(view, ".notice");
    node.textContent = message;
    node.classList.toggle("error", Boolean(isError));
    show(node, Boolean(message));
  }

  function addSource(view, chip) {
    const sources = part(view, ".sources");
    const item = el("li");
    item.value = chip.number;
    item.dir = "auto";
    const url = localUrl(chip.url);
    const title = el(url ? "a" : "span", chip.title || "Source");
    if (url) title.href = url;
    if (chip.alias) title.dataset.alias = chip.alias;
    item.append(title);
    if (chip.page) item.append(" ", el("span", `p. ${chip.page}`, "page"));
    sources.append(item);
    show(sources, true);
  }

  function renderResults(view, results) {
    const list = part(view, ".results");
    list.replaceChildren();
    for (const result of results) {
      const item = el("li");
      item.dir = "auto";
      const url = localUrl(result.url);
      const title = el(url ? "a" : "span", result.title);
      if (url) title.href = url;
      item.append(title);
      if (result.page) item.append(" ", el("span", `p. ${result.page}`, "page"));
      item.append(" ", el("span", Number(result.score).toFixed(2), "score"));
      const snippet = el("p", null, "snippet");
      snippet.innerHTML = sanitizeMarkHtml(result.snippet_html ?? "");
      item.append(snippet);
      list.append(item);
    }
    show(list, results.length > 0);
    if (!results.length) notice(view, "No matching documents.");
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

  const HANDLERS = {
    token(view, data) {
      view.text += data.text;
      renderRich(view.textEl, view.text, view.chips);
    },
    citation(view, data) {
      if (view.aliases.has(data.alias)) return;
      const chip = {
        number: view.aliases.size + 1,
        alias: data.alias,
        offset: view.text.length, // a citation arrives right after the text it supports
        url: sourceUrl(data.document),
        title: data.title || data.source_file,
        page: data.page,
        snippet: data.snippet,
      };
      view.aliases.set(data.alias, chip);
      view.chips.push(chip);
      addSource(view, chip);
      renderRich(view.textEl, view.text, view.chips);
    },
    search_results(view, data) {
      renderResults(view, data.results || []);
    },
    clarification(view, data) {
      const box = part(view, ".clarification");
      box.textContent = data.question;
      show(box, true);
    },
    confidence(view, data) {
      // Words a person understands; the score stays available on hover and to screen readers.
      const badge = part(view, ".badge");
      const words = { green: STRINGS.well_supported, yellow: STRINGS.partly_supported, red: STRINGS.not_supported };
      const score = String(STRINGS.support_score).replace("{score}", Number(data.value).toFixed(2));
      badge.querySelector(".badge-words").textContent = words[data.band] ?? "";
      badge.querySelector(".badge-score").textContent = ` (${score})`;
      badge.title = score;
      badge.className = `badge band-${data.band}`;
      show(badge, true);
    },
    followups(view, data) {
      renderFollowups(view, data.questions || []);
    },
    finished(view, data) {
      if (data.action === "clarify") view.textEl.replaceChildren();
      notice(view, "");
      view.el.dataset.status = "finished";
    },
    failed(view, data) {
      const stopped = data.code === "cancelled";
      notice(view, stopped ? "Stopped." : data.message, !stopped);
      view.el.dataset.status = stopped ? "cancelled" : "failed";
    },
  };

  function end(view) {
    view.ended = true;
    view.answer.classList.remove("streaming");
    if (state.current === view) {
      state.current = null;
      show(stopButton, false);
    }
  }

  function resetForReplay(view) {
    view.textEl.replaceChildren();
    for (const selector of [".sources", ".results", ".followups", ".clarification", ".badge", ".notice"]) {
      const node = part(view, selector);
      if (selector !== ".badge") node.replaceChildren();
      show(node, false);
    }
  }

  // --- the socket ----------------------------------------------------------------------

  function onEnvelope(envelope) {
    if (envelope.type === "ping") return; // the server's keepalive: nothing to show
    if (envelope.type === "accepted") return onAccepted(envelope);
    const view = envelope.turn != null ? state.views.get(envelope.turn) : null;
    if (!view) {
      if (envelope.type === "failed") onRefused(envelope.data);
      return;
    }
    if (envelope.seq <= view.lastSeq) return; // already shown
    view.lastSeq = envelope.seq;
    const wasNearBottom = nearBottom();
    HANDLERS[envelope.type]?.(view, envelope.data || {});
    if (envelope.type === "finished" || envelope.type === "failed") end(view);
    follow(wasNearBottom);
  }

  function onAccepted(envelope) {
    const view = state.pending || newView(envelope.data.question);
    state.pending = null;
    view.turn = envelope.turn;
    view.el.dataset.turn = envelope.turn;
    state.views.set(envelope.turn, view);
    state.current = view;
    show(stopButton, true);
    rememberConversation(envelope.data.conversation, envelope.data.question);
  }

  function onRefused(data) {
    const view = state.pending;
    state.pending = null;
    if (!view) return flash(data.message);
    notice(view, data.message, true);
    end(view);
  }

  function rememberConversation(id, question) {
    if (!id || state.conversation === id) return;
    state.conversation = id;
    chat.dataset.conversation = id;
    const path = `${chat.dataset.chatUrl}c/${id}/`;
    history.replaceState(null, "", path);
    document.querySelector(".chat-header h1").textContent = question;
    // The conversation list (conversations.js) shows the new conversation in its place.
    document.dispatchEvent(new CustomEvent("chat:conversation", { detail: { id } }));
  }

  function flash(message) {
    connection.textContent = message;
    connection.classList.add("error");
    setTimeout(() => connection.classList.remove("error"), 4000);
  }

  function send(message) {
    if (state.socket?.readyState !== WebSocket.OPEN) return false;
    state.socket.send(JSON.stringify(message));
    return true;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}${chat.dataset.wsPath}`);
    state.socket = socket;
    socket.addEventListener("open", () => {
      state.retries = 0;
      connection.textContent = "";
      chat.classList.remove("reconnecting");
      chat.dataset.connected = "true"; // for styles and browser tests
      const view = state.current;
      // Back after a drop mid-answer: ask for exactly what we missed.
      if (view && view.turn && !view.ended) {
        notice(view, "");
        send({ type: "resume", turn: view.turn, last_seq: view.lastSeq });
      }
    });
    socket.addEventListener("message", (event) => {
      let envelope;
      try {
        envelope = JSON.parse(event.data);
      } catch {
        return;
      }
      onEnvelope(envelope);
    });
    socket.addEventListener("close", (event) => {
      delete chat.dataset.connected;
      if (event.code === 4401) {
        location.assign(`${chat.dataset.loginUrl}?next=${encodeURIComponent(location.pathname)}`);
        return;
      }
      if (state.pending) onRefused({ message: STRINGS.dropped });
      connection.textContent = STRINGS.reconnecting;
      chat.classList.add("reconnecting");
      if (state.current && !state.current.ended) notice(state.current, STRINGS.reconnecting);
      const delay = Math.min(500 * 2 ** state.retries, 8000);
      state.retries += 1;
      setTimeout(connect, delay);
    });
  }

  function ask(question) {
    const text = question.trim();
    if (!text) return;
    if (state.pending) return flash(STRINGS.still_sending);
    const view = newView(text);
    state.pending = view;
    const message = { type: "ask", question: text };
    if (state.conversation) message.conversation = state.conversation;
    // The collection picker's choice; none ticked means every readable collection.
    const picked = [...document.querySelectorAll("#collection-picker input:checked")].map((box) => box.value);
    if (picked.length) message.collections = picked;
    if (!send(message)) onRefused({ message: STRINGS.not_connected });
  }

  // --- wiring --------------------------------------------------------------------------

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ask(input.value);
    input.value = "";
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  stopButton.addEventListener("click", () => {
    send({ type: "cancel" });
  });
  messages.addEventListener("click", (event) => {
    const button = event.target.closest("button.followup");
    if (button) ask(button.textContent);
  });

  // Past turns: the server rendered them as plain text with chips; upgrade to rich text.
  for (const li of messages.querySelectorAll("li.turn")) {
    const view = viewOf(li);
    const data = document.getElementById(view.textEl.dataset.render || "");
    if (data) {
      const stored = JSON.parse(data.textContent);
      renderRich(view.textEl, stored.answer, stored.citations);
    }
    if (li.dataset.status === "streaming") {
      // Reloaded mid-answer: replay it from the start over the socket, onto an empty answer,
      // so that nothing the server rendered so far is shown twice.
      resetForReplay(view);
      view.answer.classList.add("streaming");
      state.views.set(view.turn, view);
      state.current = view;
      show(stopButton, true);
    }
  }
  messages.scrollTop = messages.scrollHeight;
  connect();
})();
