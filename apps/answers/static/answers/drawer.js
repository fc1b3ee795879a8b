/* Phones: below 720 px the conversation list is a drawer behind the menu button. */

import { show } from "../ragplatform/helpers.js";

const app = document.getElementById("app");
const sidebar = document.getElementById("sidebar");
const button = document.getElementById("drawer-button");
const close = document.getElementById("drawer-close");
const backdrop = document.getElementById("drawer-backdrop");
const dialog = document.getElementById("delete-dialog");

const isOpen = () => app.classList.contains("drawer-open");

function setOpen(open) {
  app.classList.toggle("drawer-open", open);
  button.setAttribute("aria-expanded", String(open));
  show(backdrop, open);
  if (open) sidebar.querySelector(".new-chat")?.focus();
  else if (sidebar.contains(document.activeElement)) button.focus();
}

button.addEventListener("click", () => setOpen(!isOpen()));
close?.addEventListener("click", () => setOpen(false));
backdrop.addEventListener("click", () => setOpen(false));
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && isOpen() && !dialog?.open) setOpen(false);
});
// Back to a wide screen (a rotated tablet): the sidebar is a column again, not a drawer.
window.matchMedia("(max-width: 720px)").addEventListener("change", () => setOpen(false));
