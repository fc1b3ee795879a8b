// The admin's document list: while any listed document is pending or processing, ask the
// progress view for fresh cells (every column but the document's link: status, progress,
// chunks, size, language...) and swap them in, so an upload can be watched without reloading. The cells are rendered by the server, as
// on the first load; this file shows no text of its own. Its address and pace come from the
// template, on the script element (#document-progress).

import { fetchJson } from "../ragplatform/helpers.js";

const script = document.getElementById("document-progress");
const intervalMs = Number(script.dataset.intervalMs) || 2000;
const FINAL = new Set(["ready", "failed"]);

function marks() {
  return Array.from(document.querySelectorAll("#result_list [data-document-id]"));
}

function update(entry) {
  const mark = document.querySelector(`#result_list [data-document-id="${entry.id}"]`);
  const row = mark && mark.closest("tr");
  if (!row) return;
  for (const [name, html] of Object.entries(entry.cells)) {
    const cell = row.querySelector(`.field-${name}`);
    if (cell && cell.innerHTML !== html) cell.innerHTML = html; // the server's own cell markup
  }
}

async function poll() {
  const ids = marks().map((mark) => mark.dataset.documentId);
  if (!ids.length) return;
  const url = new URL(script.dataset.url, location.origin);
  url.searchParams.set("ids", ids.join(","));
  try {
    const data = await fetchJson(url);
    data.documents.forEach(update);
    if (data.active) setTimeout(poll, intervalMs);
  } catch {
    setTimeout(poll, intervalMs * 5); // signed out, server restarting: retried, less often
  }
}

// A module runs once the document is parsed: the list is there.
if (marks().some((mark) => !FINAL.has(mark.dataset.status))) setTimeout(poll, intervalMs);
