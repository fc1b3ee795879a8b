// The admin's document list: while any listed document is pending or processing, ask the
// progress view for fresh cells (status, progress, waiting time, failure reason) and swap them
// in, so an upload can be watched without reloading. The cells are rendered by the server, as
// on the first load; this file shows no text of its own.
(function () {
  "use strict";

  const script = document.currentScript;
  const url = script.dataset.url;
  const intervalMs = Number(script.dataset.intervalMs) || 2000;
  const FINAL = new Set(["ready", "failed"]);

  function marks() {
    return Array.from(document.querySelectorAll("#result_list [data-document-id]"));
  }

  function update(entry) {
    const mark = document.querySelector(`#result_list [data-document-id="${entry.id}"]`);
    const row = mark && mark.closest("tr");
    if (!row) {
      return;
    }
    for (const [name, html] of Object.entries(entry.cells)) {
      const cell = row.querySelector(`.field-${name}`);
      if (cell && cell.innerHTML !== html) {
        cell.innerHTML = html;
      }
    }
  }

  function poll() {
    const ids = marks().map((mark) => mark.dataset.documentId);
    if (!ids.length) {
      return;
    }
    fetch(`${url}?ids=${ids.join(",")}`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((data) => {
        data.documents.forEach(update);
        if (data.active) {
          window.setTimeout(poll, intervalMs);
        }
      })
      // A failed poll (signed out, server restarting) is retried, less often.
      .catch(() => window.setTimeout(poll, intervalMs * 5));
  }

  function start() {
    if (marks().some((mark) => !FINAL.has(mark.dataset.status))) {
      window.setTimeout(poll, intervalMs);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
