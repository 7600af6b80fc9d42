/* Document admin: poll the progress of documents still pending or processing and update their rows in place, and
   the counts of the upload the list is filtered to. */
(function () {
  "use strict";

  var IN_FLIGHT = { pending: true, processing: true };
  var BASE_DELAY = 1500;
  var MAX_DELAY = 8000;
  var delay = BASE_DELAY;
  var timer = null;

  function cells() {
    return Array.prototype.slice.call(document.querySelectorAll(".dm-ingest[data-document-id]"));
  }

  function inFlightIds() {
    var ids = {};
    cells().forEach(function (cell) {
      if (IN_FLIGHT[cell.getAttribute("data-status")]) ids[cell.getAttribute("data-document-id")] = true;
    });
    return Object.keys(ids);
  }

  function update(doc) {
    document.querySelectorAll('.dm-ingest[data-document-id="' + doc.id + '"]').forEach(function (cell) {
      cell.setAttribute("data-status", doc.status);
      cell.querySelector(".dm-bar").value = doc.progress;
      cell.querySelector(".dm-status").textContent = doc.status_label;
      cell.querySelector(".dm-percent").textContent = doc.progress + "%";
      cell.querySelector(".dm-error").textContent = doc.error || "";
    });
    document.querySelectorAll('[data-chunks-of="' + doc.id + '"]').forEach(function (el) {
      el.textContent = String(doc.chunk_count);
    });
  }

  function forget(id) {
    // Deleted meanwhile: stop asking about it.
    document.querySelectorAll('.dm-ingest[data-document-id="' + id + '"]').forEach(function (cell) {
      cell.setAttribute("data-status", "gone");
    });
  }

  // The summary of one upload (the list filtered to it): its counts per status, across every page.
  function summary() {
    return document.getElementById("dm-upload-summary");
  }

  function summaryInFlight() {
    var box = summary();
    if (!box) return false;
    return ["pending", "processing"].some(function (status) {
      var el = box.querySelector('[data-count="' + status + '"]');
      return el && el.textContent !== "0";
    });
  }

  function updateSummary(counts) {
    var box = summary();
    if (!box || !counts) return;
    Object.keys(counts).forEach(function (status) {
      var el = box.querySelector('[data-count="' + status + '"]');
      if (el) el.textContent = String(counts[status]);
    });
  }

  function poll() {
    timer = null;
    var ids = inFlightIds();
    var first = cells()[0];
    if ((!ids.length && !summaryInFlight()) || !first) return;
    var url = first.getAttribute("data-progress-url") + "?ids=" + ids.join(",");
    if (summary()) url += "&upload=" + encodeURIComponent(summary().getAttribute("data-upload"));
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        var seen = {};
        data.documents.forEach(function (doc) { seen[doc.id] = true; update(doc); });
        updateSummary(data.upload);
        ids.forEach(function (id) { if (!seen[id]) forget(id); });
        delay = BASE_DELAY;
      })
      .catch(function () {
        // The server may be restarting or briefly unreachable: keep asking, less often.
        delay = Math.min(delay * 2, MAX_DELAY);
      })
      .then(schedule);
  }

  function schedule() {
    if (timer === null && (inFlightIds().length || summaryInFlight())) timer = window.setTimeout(poll, delay);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", schedule);
  else schedule();
})();
