/* Document admin: drop files onto the upload zone (or choose them) and see the list before uploading. */
(function () {
  "use strict";

  function init() {
    var form = document.getElementById("dm-upload");
    var zone = document.getElementById("dm-dropzone");
    var input = document.getElementById("dm-upload-files");
    var list = document.getElementById("dm-upload-list");
    if (!form || !zone || !input || !list) return;

    function showSelection() {
      list.textContent = "";
      Array.prototype.forEach.call(input.files, function (file) {
        var item = document.createElement("li");
        item.textContent = file.name + " (" + Math.max(1, Math.round(file.size / 1024)) + " KB)";
        list.appendChild(item);
      });
    }

    function hasFiles(event) {
      return event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0;
    }

    input.addEventListener("change", showSelection);
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
      input.files = event.dataTransfer.files;
      showSelection();
    });
    // A file dropped beside the zone would make the browser leave the page to show it.
    window.addEventListener("dragover", function (event) { if (hasFiles(event)) event.preventDefault(); });
    window.addEventListener("drop", function (event) { if (hasFiles(event)) event.preventDefault(); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
