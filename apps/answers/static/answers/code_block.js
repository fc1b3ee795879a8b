/* Code in the answer and in the source preview: a command or a configuration shown as
 * <pre><code>, left to right whatever the conversation's language, with a copy button.
 *
 * The button copies the block's text through the Clipboard API, or, where the page may not
 * use it (an insecure origin, a denied permission), through a selected textarea; it says what
 * happened on its own label and in a status region, so a screen reader hears it. Every word
 * comes from the page (chat_strings). Text only ever becomes text nodes.
 */

import { announce, el, pageStrings } from "../ragplatform/helpers.js";

const strings = pageStrings();
const RESET_MS = 2500;

/** An empty code block: {block, code}; text appended to `code` is the code. */
export function codeBlock() {
  const block = el("div", null, "code-block");
  block.dir = "ltr"; // commands and configuration read left to right, in Persian too
  const button = el("button", strings.copy_code ?? "", "code-copy");
  button.type = "button"; // its words are its label: "Copy code", then what happened
  const status = el("span", null, "code-status visually-hidden");
  status.setAttribute("role", "status");
  const pre = block.appendChild(el("pre"));
  const code = pre.appendChild(el("code"));
  block.append(button, status);
  return { block, code };
}

/** A code block holding `text`, whole. */
export function codeBlockOf(text) {
  const { block, code } = codeBlock();
  code.textContent = text;
  return block;
}

// A fenced block of a chunk's text: its opening fence line, its lines, its closing fence.
const FENCED = /^(`{3,})[^\n`]*\n([\s\S]*?)\n\1`*[ \t]*$/gm;

/** The text cut into prose and fenced code: [{code, start, end, body}], offsets into text. */
export function codeSegments(text) {
  const segments = [];
  let at = 0;
  for (const match of String(text).matchAll(FENCED)) {
    if (match.index > at) segments.push({ code: false, start: at, end: match.index, body: text.slice(at, match.index) });
    segments.push({ code: true, start: match.index, end: match.index + match[0].length, body: match[2] });
    at = match.index + match[0].length;
  }
  if (at < text.length) segments.push({ code: false, start: at, end: text.length, body: text.slice(at) });
  return segments;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = Object.assign(document.createElement("textarea"), { value: text });
    area.setAttribute("readonly", "");
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

async function copyBlock(button) {
  const block = button.closest(".code-block");
  const done = await copy(block.querySelector("code").textContent);
  const message = done ? strings.code_copied : strings.copy_failed;
  button.textContent = message ?? "";
  button.dataset.state = done ? "copied" : "failed";
  announce(block.querySelector(".code-status"), message);
  clearTimeout(button.resetTimer);
  button.resetTimer = setTimeout(() => {
    button.textContent = strings.copy_code ?? "";
    delete button.dataset.state;
  }, RESET_MS);
}

// One listener for every block, written now or later, in the answers and in the preview.
document.addEventListener("click", (event) => {
  const button = event.target.closest?.(".code-copy");
  if (button) copyBlock(button);
});
