/* The conversation list: search as you type, rename in place, delete after a confirmation,
 * and the collection picker's summary. The server renders the list; this script only asks
 * for it again and swaps it in. Every word it shows comes from the page (#chat-strings) or
 * from the server's error message.
 */

import { fetchJson, flash, format, pageStrings, request } from "../ragplatform/helpers.js";

const sidebar = document.getElementById("sidebar");
const chat = document.getElementById("chat");
const list = document.getElementById("conversation-list");
const searchForm = sidebar.querySelector(".conversation-search");
const searchInput = document.getElementById("conversation-search");
const dialog = document.getElementById("delete-dialog");
const connection = document.getElementById("connection");
const STRINGS = pageStrings();

const currentId = () => chat?.dataset.conversation || "";

// The server's message when it sent one (the platform's JSON error shape), else ours.
function report(error) {
  flash(connection, error.message || STRINGS.unreachable);
}

function post(form) {
  return fetchJson(form.action, { method: "POST", body: new FormData(form) }); // with its CSRF token
}

// --- search, and the list after a change -----------------------------------------------

let asked = 0; // only the latest answer is shown, whatever order the answers arrive in

async function refresh() {
  const mine = ++asked;
  const url = new URL(searchForm.dataset.searchUrl, location.origin);
  url.searchParams.set("q", searchInput.value.trim());
  url.searchParams.set("current", currentId());
  let html;
  try {
    html = await (await request(url)).text();
  } catch (error) {
    return report(error);
  }
  if (mine !== asked) return;
  // The server's own template, escaped there; parsed into nodes rather than assigned.
  const parsed = new DOMParser().parseFromString(html, "text/html");
  list.replaceChildren(...parsed.body.childNodes);
}

let typing = null;
searchInput.addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(refresh, 200);
});
searchForm.addEventListener("submit", (event) => {
  event.preventDefault();
  clearTimeout(typing);
  refresh();
});
document.addEventListener("chat:conversation", refresh);

// --- rename ------------------------------------------------------------------------------

function renaming(item, on) {
  item.classList.toggle("renaming", on);
  item.querySelector("a").hidden = on;
  const form = item.querySelector(".rename-form");
  form.hidden = !on;
  if (on) {
    form.elements.title.value = item.querySelector("a").title;
    form.elements.title.focus();
    form.elements.title.select();
  }
}

async function rename(form) {
  const item = form.closest("li.conversation");
  try {
    const body = await post(form);
    const link = item.querySelector("a");
    link.textContent = body.title;
    link.title = body.title;
    if (item.dataset.id === currentId()) document.querySelector(".chat-header h1").textContent = body.title;
    renaming(item, false);
    link.focus();
  } catch (error) {
    report(error);
    form.elements.title.focus();
  }
}

list.addEventListener("click", (event) => {
  const button = event.target.closest(".rename-button");
  if (button) renaming(button.closest("li.conversation"), true);
});
list.addEventListener("keydown", (event) => {
  const form = event.target.closest(".rename-form");
  if (form && event.key === "Escape") {
    event.stopPropagation(); // the drawer stays open
    renaming(form.closest("li.conversation"), false);
  }
});

// --- delete, once confirmed ----------------------------------------------------------------

let deleting = null;

async function remove(form) {
  try {
    await post(form);
  } catch (error) {
    return report(error);
  }
  if (form.closest("li.conversation").dataset.id === currentId()) {
    location.assign(chat.dataset.chatUrl); // the open conversation is gone: start afresh
  } else {
    refresh();
  }
}

dialog.addEventListener("close", () => {
  const form = deleting;
  deleting = null;
  if (form && dialog.returnValue === "delete") remove(form);
});

list.addEventListener("submit", (event) => {
  const form = event.target;
  event.preventDefault();
  if (form.classList.contains("rename-form")) {
    rename(form);
  } else if (form.classList.contains("delete-form")) {
    deleting = form;
    dialog.returnValue = "";
    dialog.showModal();
  }
});

// --- the collection picker -----------------------------------------------------------------

const picker = document.getElementById("collection-picker");
picker?.addEventListener("change", () => {
  const boxes = [...picker.querySelectorAll("input[type=checkbox]")];
  const chosen = boxes.filter((box) => box.checked).length;
  const summary = chosen && chosen < boxes.length
    ? format(STRINGS.collections_some, { chosen, total: boxes.length })
    : STRINGS.collections_all;
  document.getElementById("collection-summary").textContent = summary;
});
