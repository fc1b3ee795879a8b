/* The chat page: one WebSocket, a turn's typed events in, DOM nodes out (turn_view.js).
 *
 * The answer being written is aria-busy; the message list is not a live region (it would read
 * every token out). The end of each answer is said once, in the #chat-status region.
 */

import { announce, fillUrl, flash, pageStrings, show } from "../ragplatform/helpers.js";
import { HANDLERS, endView, newView, notice, resetForReplay, showProgress, upgradeStored, viewOf } from "./turn_view.js";

const chat = document.getElementById("chat");
const messages = document.getElementById("messages");
const form = document.getElementById("ask-form");
const input = document.getElementById("question");
const stopButton = document.getElementById("stop-button");
const connection = document.getElementById("connection");
const statusRegion = document.getElementById("chat-status");
const template = document.getElementById("turn-template");
// Every word the page shows comes from the template, in the interface language.
const STRINGS = pageStrings();

const state = {
  socket: null,
  conversation: chat.dataset.conversation || null,
  pending: null, // the view of a question sent but not yet accepted
  current: null, // the view whose answer is streaming
  views: new Map(), // turn id -> view
  retries: 0,
};

function nearBottom() {
  return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 80;
}

function follow(wasNearBottom) {
  if (wasNearBottom) messages.scrollTop = messages.scrollHeight;
}

function addView(question) {
  const view = newView(template, question);
  document.getElementById("empty")?.remove();
  messages.appendChild(view.el);
  messages.scrollTop = messages.scrollHeight;
  return view;
}

function end(view, said) {
  endView(view);
  if (said) announce(statusRegion, said);
  if (state.current === view) {
    state.current = null;
    show(stopButton, false);
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
  const said = HANDLERS[envelope.type]?.(view, envelope.data || {});
  if (envelope.type === "finished" || envelope.type === "failed") end(view, said);
  follow(wasNearBottom);
}

function onAccepted(envelope) {
  const view = state.pending || addView(envelope.data.question);
  state.pending = null;
  view.turn = envelope.turn;
  view.el.dataset.turn = envelope.turn;
  state.views.set(envelope.turn, view);
  state.current = view;
  show(stopButton, true);
  showProgress(view, "searching"); // the turn is stored and its search has begun
  rememberConversation(envelope.data.conversation, envelope.data.question);
}

function onRefused(data) {
  const view = state.pending;
  state.pending = null;
  if (!view) return flash(connection, data.message);
  notice(view, data.message, true);
  end(view, data.message);
}

function rememberConversation(id, question) {
  if (!id || state.conversation === id) return;
  state.conversation = id;
  chat.dataset.conversation = id;
  history.replaceState(null, "", fillUrl(chat.dataset.conversationUrl, id));
  document.querySelector(".chat-header h1").textContent = question;
  // The conversation list (conversations.js) shows the new conversation in its place.
  document.dispatchEvent(new CustomEvent("chat:conversation", { detail: { id } }));
}

function send(message) {
  if (state.socket?.readyState !== WebSocket.OPEN) return false;
  state.socket.send(JSON.stringify(message));
  return true;
}

function onOpen() {
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
}

// The server's close codes: 4401, the login has ended (go and sign in again); 4503, the
// server cannot reach its database to check the login, which is not a logout: like a
// dropped network it is retried, with the same back-off, and the answer resumed.
const CLOSE_UNAUTHENTICATED = 4401;

function onClose(event) {
  delete chat.dataset.connected;
  if (event.code === CLOSE_UNAUTHENTICATED) {
    const login = new URL(chat.dataset.loginUrl, location.origin);
    login.searchParams.set("next", location.pathname);
    location.assign(login);
    return;
  }
  if (state.pending) onRefused({ message: STRINGS.dropped });
  connection.textContent = STRINGS.reconnecting;
  chat.classList.add("reconnecting");
  if (state.current && !state.current.ended) notice(state.current, STRINGS.reconnecting);
  const delay = Math.min(500 * 2 ** state.retries, 8000);
  state.retries += 1;
  setTimeout(connect, delay);
}

function connect() {
  const address = new URL(chat.dataset.wsPath, location.href);
  address.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(address);
  state.socket = socket;
  socket.addEventListener("open", onOpen);
  socket.addEventListener("message", (event) => {
    let envelope;
    try {
      envelope = JSON.parse(event.data);
    } catch {
      return;
    }
    onEnvelope(envelope);
  });
  socket.addEventListener("close", onClose);
}

function ask(question) {
  const text = question.trim();
  if (!text) return;
  if (state.pending) return flash(connection, STRINGS.still_sending);
  const view = addView(text);
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
  if (data) upgradeStored(view, JSON.parse(data.textContent));
  if (li.dataset.status === "streaming") {
    // Reloaded mid-answer: replay it from the start over the socket, onto an empty answer,
    // so that nothing the server rendered so far is shown twice.
    resetForReplay(view);
    state.views.set(view.turn, view);
    state.current = view;
    show(stopButton, true);
  }
}
messages.scrollTop = messages.scrollHeight;
connect();
