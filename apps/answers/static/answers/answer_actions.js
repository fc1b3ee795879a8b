/* Under each ended answer: copy (the text with its sources listed), regenerate (the same
 * question asked again in this conversation; the earlier turn stays as it was), and the
 * asker's thumbs up or down with an optional reason and comment.
 */

import { fetchJson, fillUrl, pageStrings } from "../ragplatform/helpers.js";

const messages = document.getElementById("messages");
const form = document.getElementById("ask-form");
const input = document.getElementById("question");
const chat = document.getElementById("chat");
// Every word it shows comes from the page, in the interface language.
const strings = pageStrings();

function status(turn, message) {
  const node = turn.querySelector(".action-status");
  node.textContent = message;
}

/* The answer as a reader would paste it: chips as [n], then the numbered sources. */
function answerText(turn) {
  const copy = turn.querySelector(".answer-text").cloneNode(true);
  for (const chip of copy.querySelectorAll(".chip")) chip.textContent = `[${chip.textContent}]`;
  for (const control of copy.querySelectorAll(".code-copy, .code-status")) control.remove();
  for (const block of copy.querySelectorAll("p, li, h3, tr, pre")) block.append("\n");
  const text = copy.textContent.replace(/\n{3,}/g, "\n\n").trim();
  const sources = [...turn.querySelectorAll(".sources > li")].map(
    (item) => `[${item.value}] ${item.textContent.replace(/\s+/g, " ").trim()}`,
  );
  return sources.length ? `${text}\n\n${strings.sources}:\n${sources.join("\n")}` : text;
}

async function copyAnswer(turn) {
  const text = answerText(turn);
  try {
    await navigator.clipboard.writeText(text);
    status(turn, strings.copied);
  } catch {
    // No clipboard access (an insecure origin, a denied permission): the old way.
    const area = Object.assign(document.createElement("textarea"), { value: text });
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    status(turn, done ? strings.copied : strings.copy_failed);
  }
}

function regenerate(turn) {
  // Through the ask box, so the new turn is asked exactly like a typed question.
  input.value = turn.querySelector(".question").textContent;
  form.requestSubmit();
}

function sendFeedback(turn, body) {
  return fetchJson(fillUrl(chat.dataset.feedbackUrl, turn.dataset.turn), {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": chat.dataset.csrf },
    body: JSON.stringify(body),
  });
}

function feedbackBody(turn, rating) {
  const feedbackForm = turn.querySelector(".feedback-form");
  // The reasons say what was wrong: a thumbs up clears one left from an earlier thumbs down.
  if (rating === "up") for (const radio of feedbackForm.querySelectorAll("input[name=reason]")) radio.checked = false;
  return {
    rating,
    reason: feedbackForm.querySelector("input[name=reason]:checked")?.value ?? "",
    comment: feedbackForm.querySelector("textarea[name=comment]").value,
  };
}

async function rate(turn, rating, { closeForm }) {
  try {
    const saved = await sendFeedback(turn, feedbackBody(turn, rating));
    for (const button of turn.querySelectorAll("button.rate")) {
      button.setAttribute("aria-pressed", String(button.dataset.rating === saved.rating));
    }
    status(turn, strings.thanks);
    const feedbackForm = turn.querySelector(".feedback-form");
    feedbackForm.hidden = closeForm;
    if (!closeForm) feedbackForm.querySelector("input[name=reason]")?.focus();
  } catch {
    status(turn, strings.feedback_failed);
  }
}

function currentRating(turn) {
  return turn.querySelector("button.rate[aria-pressed=true]")?.dataset.rating;
}

messages.addEventListener("click", (event) => {
  const button = event.target.closest(".answer-actions button");
  const turn = button?.closest("li.turn");
  if (!turn || !turn.dataset.turn) return;
  if (button.classList.contains("action-copy")) copyAnswer(turn);
  else if (button.classList.contains("action-regenerate")) regenerate(turn);
  else if (button.classList.contains("rate")) {
    // A thumbs down asks what was wrong (optional); a thumbs up is enough on its own.
    rate(turn, button.dataset.rating, { closeForm: button.dataset.rating === "up" });
  }
  else if (button.classList.contains("feedback-close")) turn.querySelector(".feedback-form").hidden = true;
});
messages.addEventListener("submit", (event) => {
  const feedbackForm = event.target.closest(".feedback-form");
  if (!feedbackForm) return;
  event.preventDefault();
  const turn = feedbackForm.closest("li.turn");
  const rating = currentRating(turn);
  if (rating) rate(turn, rating, { closeForm: true });
});
