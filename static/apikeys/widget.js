/* DocMind chat widget: one tag on an intranet page,
 *   <script src="https://docmind.example/static/apikeys/widget.js" data-key="dmk_…" async></script>
 * adds a button that opens the chat in a frame served by DocMind. DocMind serves the frame only to the
 * origins listed on the key, and browsers show it only inside those pages (frame-ancestors). */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.dataset.key) { return; }
  var base = new URL(script.src, document.baseURI).origin;
  var frame = document.createElement("iframe");
  frame.src = base + "/widget/frame/?key=" + encodeURIComponent(script.dataset.key);
  frame.title = script.dataset.title || "DocMind";
  frame.className = "docmind-widget-frame";
  // DocMind checks the embedding page's origin: the frame's request must carry it.
  frame.referrerPolicy = "strict-origin-when-cross-origin";
  frame.style.cssText = "position:fixed;right:16px;bottom:72px;width:360px;height:480px;max-width:calc(100vw - 32px);"
    + "border:1px solid #d0d7de;border-radius:8px;box-shadow:0 4px 16px rgba(0,0,0,.15);background:#fff;"
    + "z-index:2147483646;display:none";
  var button = document.createElement("button");
  button.type = "button";
  button.className = "docmind-widget-button";
  button.textContent = script.dataset.label || "?";
  button.setAttribute("aria-label", frame.title);
  button.setAttribute("aria-expanded", "false");
  button.style.cssText = "position:fixed;right:16px;bottom:16px;width:48px;height:48px;border-radius:24px;"
    + "border:0;background:#0969da;color:#fff;font:600 20px system-ui,sans-serif;cursor:pointer;z-index:2147483647";
  button.addEventListener("click", function () {
    var open = frame.style.display === "none";
    frame.style.display = open ? "block" : "none";
    button.setAttribute("aria-expanded", String(open));
  });
  function mount() { document.body.appendChild(frame); document.body.appendChild(button); }
  if (document.body) { mount(); } else { document.addEventListener("DOMContentLoaded", mount); }
})();
