/* Document admin: drop files, folders or zip archives onto the upload zone (or choose files or a folder) and see
   the list before uploading. A folder's files keep their path inside it, sent beside the files as JSON. */
(function () {
  "use strict";

  function init() {
    var form = document.getElementById("dm-upload");
    var zone = document.getElementById("dm-dropzone");
    var input = document.getElementById("dm-upload-files");
    var folder = document.getElementById("dm-upload-folder");
    var paths = document.getElementById("dm-upload-paths");
    var list = document.getElementById("dm-upload-list");
    if (!form || !zone || !input || !list) return;

    // The selection as {file, path}; the file input and the paths field are rebuilt from it.
    var selected = [];

    function showSelection() {
      list.textContent = "";
      selected.forEach(function (entry) {
        var item = document.createElement("li");
        // A small file reads as 1 KB rather than 0; only an empty one, which will be refused, reads 0 KB.
        var size = entry.file.size ? Math.max(1, Math.round(entry.file.size / 1024)) : 0;
        item.textContent = entry.path + " (" + size + " KB)";
        list.appendChild(item);
      });
    }

    function apply(entries) {
      selected = entries;
      if (typeof DataTransfer === "function") {
        var transfer = new DataTransfer();
        entries.forEach(function (entry) { transfer.items.add(entry.file); });
        input.files = transfer.files;
      }
      if (paths) paths.value = JSON.stringify(entries.map(function (entry) { return entry.path; }));
      showSelection();
    }

    function fromFiles(files, pathOf) {
      return Array.prototype.map.call(files, function (file) { return { file: file, path: pathOf(file) }; });
    }

    // Walks dropped folders (readEntries answers in batches until it answers an empty one).
    function collect(entry, out) {
      if (entry.isFile) {
        return new Promise(function (resolve) {
          entry.file(function (file) {
            out.push({ file: file, path: entry.fullPath.replace(/^\/+/, "") });
            resolve();
          }, function () { resolve(); });
        });
      }
      if (!entry.isDirectory) return Promise.resolve();
      var reader = entry.createReader();
      return new Promise(function (resolve) {
        function next() {
          reader.readEntries(function (batch) {
            if (!batch.length) { resolve(); return; }
            Promise.all(batch.map(function (child) { return collect(child, out); })).then(next);
          }, function () { resolve(); });
        }
        next();
      });
    }

    function hasFiles(event) {
      return event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0;
    }

    input.addEventListener("change", function () {
      apply(fromFiles(input.files, function (file) { return file.name; }));
    });
    if (folder) {
      folder.addEventListener("change", function () {
        apply(fromFiles(folder.files, function (file) { return file.webkitRelativePath || file.name; }));
        folder.value = "";
      });
    }
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        if (!hasFiles(event)) return;
        event.preventDefault();
        zone.classList.add("dm-over");
      });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function () { zone.classList.remove("dm-over"); });
    });
    zone.addEventListener("drop", function (event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      var items = event.dataTransfer.items;
      // Entries must be taken during the event: the drop's items are gone once it returns.
      var entries = items ? Array.prototype.map.call(items, function (item) {
        return item.webkitGetAsEntry ? item.webkitGetAsEntry() : null;
      }).filter(Boolean) : [];
      if (!entries.length) {
        apply(fromFiles(event.dataTransfer.files, function (file) { return file.name; }));
        return;
      }
      var out = [];
      Promise.all(entries.map(function (entry) { return collect(entry, out); })).then(function () {
        out.sort(function (a, b) { return a.path < b.path ? -1 : a.path > b.path ? 1 : 0; });
        apply(out);
      });
    });
    // A file dropped beside the zone would make the browser leave the page to show it.
    window.addEventListener("dragover", function (event) { if (hasFiles(event)) event.preventDefault(); });
    window.addEventListener("drop", function (event) { if (hasFiles(event)) event.preventDefault(); });
    // The zone is in the page before this script runs: say when a drop or a choice will be taken.
    zone.setAttribute("data-ready", "");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
