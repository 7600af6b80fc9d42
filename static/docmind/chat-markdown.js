// DocMind safe Markdown subset for model and document text: paragraphs, lists, headings, bold,
// inline code, fenced code and [n] citations. Everything is built with createElement and
// textContent, never innerHTML, so no markup or script in the text can ever become live.
(function () {
  "use strict";

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function renderInline(parent, text, cite) {
    // A group ([1, 2], [1，2], [1、2]) cites each of its sources, as the server's citation parser reads it.
    const pattern = /(\*\*[^*\n]+\*\*|`[^`\n]+`|\[\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\])/g;
    let last = 0;
    let m;
    while ((m = pattern.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      const tok = m[0];
      if (tok.startsWith("**")) {
        parent.appendChild(el("strong", null, tok.slice(2, -2)));
      } else if (tok.startsWith("`")) {
        parent.appendChild(el("code", null, tok.slice(1, -1)));
      } else if (cite) {
        tok.slice(1, -1).split(/\s*[,，、]\s*/).forEach((n) => parent.appendChild(cite(parseInt(n, 10))));
      } else {
        parent.appendChild(document.createTextNode(tok));
      }
      last = m.index + tok.length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function render(container, text, cite) {
    container.replaceChildren();
    const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    let para = [];
    let list = null;
    let code = null;
    const flushPara = () => {
      if (para.length) {
        const p = el("p");
        para.forEach((line, i) => { if (i) p.appendChild(el("br")); renderInline(p, line, cite); });
        container.appendChild(p);
        para = [];
      }
    };
    const flushList = () => { if (list) { container.appendChild(list); list = null; } };
    for (const raw of lines) {
      if (code !== null) {
        if (/^\s*```/.test(raw)) { const pre = el("pre"); pre.appendChild(el("code", null, code.join("\n"))); container.appendChild(pre); code = null; }
        else code.push(raw);
        continue;
      }
      if (/^\s*```/.test(raw)) { flushPara(); flushList(); code = []; continue; }
      const line = raw.trimEnd();
      const bullet = line.match(/^\s*[-*•]\s+(.*)$/);
      const ordered = line.match(/^\s*(\d{1,3})[.)、]\s+(.*)$/);
      const heading = line.match(/^\s*#{1,6}\s+(.*)$/);
      if (bullet || ordered) {
        flushPara();
        const tag = bullet ? "ul" : "ol";
        if (!list || list.tagName.toLowerCase() !== tag) { flushList(); list = el(tag); }
        const li = el("li");
        renderInline(li, bullet ? bullet[1] : ordered[2], cite);
        list.appendChild(li);
      } else if (heading) {
        flushPara(); flushList();
        const h = el("h4");
        renderInline(h, heading[1], cite);
        container.appendChild(h);
      } else if (!line.trim()) {
        flushPara(); flushList();
      } else {
        flushList();
        para.push(line);
      }
    }
    if (code !== null) { const pre = el("pre"); pre.appendChild(el("code", null, code.join("\n"))); container.appendChild(pre); }
    flushPara(); flushList();
  }


  // `cite(n)` returns the node for a citation marker [n]; without it markers stay plain text.
  window.DocMindMarkdown = { render };
})();
