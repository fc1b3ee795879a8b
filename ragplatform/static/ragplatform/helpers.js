/* What every page script shares: the words and addresses the template hands over, a few DOM
 * helpers, and JSON requests with the platform's one error shape.
 *
 * It lives in ragplatform, below every app, so corpus's admin script may use it as well as the
 * chat's scripts (imports flow down: analytics -> answers -> corpus -> ragplatform).
 * It holds no words of its own: every string a person reads comes from the page.
 */

/** The page's words, from the JSON block the template renders (`json_script`). */
export function pageStrings(id = "chat-strings") {
  const block = document.getElementById(id);
  return block ? JSON.parse(block.textContent) : {};
}

export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text != null) node.textContent = text;
  if (className) node.className = className;
  return node;
}

export function show(node, visible) {
  node.hidden = !visible;
}

/** Only same-origin paths become links; anything else is inert. */
export function localUrl(url) {
  return typeof url === "string" && /^\/(?!\/)/.test(url) ? url : null;
}

// A segment the template reversed as a placeholder: 0 (a number or a string) or the nil UUID.
const PLACEHOLDER = /\/(?:0|00000000-0000-0000-0000-000000000000)(?=\/|$)/g;

/** A `{% url %}` reversed with placeholder arguments, filled in order with real values. */
export function fillUrl(template, ...values) {
  let next = 0;
  return String(template).replace(PLACEHOLDER, (segment) =>
    next < values.length ? `/${encodeURIComponent(values[next++])}` : segment,
  );
}

/** `template` with each `%(name)s` replaced, as Django's translated strings spell them. */
export function format(template, values) {
  return String(template ?? "").replace(/%\((\w+)\)s/g, (whole, name) => String(values[name] ?? whole));
}

/** A passing message on a status line (the chat's connection line): shown as an error a while. */
export function flash(node, message, ms = 4000) {
  node.textContent = message;
  node.classList.add("error");
  setTimeout(() => node.classList.remove("error"), ms);
}

/** Says `message` once in a `role="status"` region; emptied first so a repeat is heard. */
export function announce(region, message) {
  if (!region) return;
  region.textContent = "";
  setTimeout(() => {
    region.textContent = message;
  }, 50);
}

export class RequestError extends Error {
  constructor(status, message) {
    super(message || "");
    this.status = status; // 0: the server was not reached
  }
}

/** A same-origin request; a failure throws RequestError with the server's message, if any. */
export async function request(url, { method = "GET", body, headers = {} } = {}) {
  const response = await fetch(url, { method, body, headers, credentials: "same-origin" }).catch(() => null);
  if (!response) throw new RequestError(0, "");
  if (!response.ok) {
    const error = await response.json().catch(() => ({}));
    throw new RequestError(response.status, error.error?.message);
  }
  return response;
}

/** The same, asking for JSON and returning it parsed. */
export async function fetchJson(url, { headers = {}, ...options } = {}) {
  const response = await request(url, { ...options, headers: { Accept: "application/json", ...headers } });
  return response.json();
}
