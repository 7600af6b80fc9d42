// DocMind chat page: WebSocket client, safe Markdown rendering, citations, sources and trace.
// Model and document text is only ever placed with textContent / createTextNode: nothing from
// an answer or a document can become markup or script.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const app = $("app");
  if (!app) return;

  const els = {
    messages: $("messages"), welcome: $("welcome"), input: $("input"), send: $("send"),
    cancel: $("cancel"), form: $("composer"), convList: $("conv-list"), convEmpty: $("conv-empty"),
    title: $("chat-title"), picker: $("doc-picker"), conn: $("conn"), docNote: $("doc-note"),
    charCount: $("char-count"), sidebar: $("sidebar"), lengthWarning: $("length-warning"),
  };
  const maxChars = parseInt(app.dataset.maxChars || "4000", 10);
  // Strings come from Django's JavaScript catalogue (/jsi18n/) in the page's language.
  const _ = window.gettext || ((text) => text);
  const fmt = (text, values) => (window.interpolate ? window.interpolate(text, values, true)
    : text.replace(/%\((\w+)\)s/g, (m, k) => String(values[k])));
  const state = { ws: null, conversationId: null, streaming: false, turn: null, retry: 0, queued: null, follow: true };

  // ---------- DOM helpers ----------
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function csrfToken() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  // The view follows a streaming answer to its end unless the reader scrolls up to read something
  // else; scrolling back to the bottom (or sending a question) resumes following.
  function atBottom() {
    const box = els.messages;
    return box.scrollHeight - box.scrollTop - box.clientHeight < 48;
  }
  function scrollToBottom(force) {
    if (force) state.follow = true;
    if (!state.follow) return;
    const box = els.messages;
    box.scrollTop = box.scrollHeight;
    // Late layout (sources, badges, fonts) can still grow the answer after this frame.
    requestAnimationFrame(() => { if (state.follow) box.scrollTop = box.scrollHeight; });
  }
  function onReaderScroll(ev) {
    if (ev.type === "wheel" && ev.deltaY < 0) state.follow = false;
    else if (ev.type === "keydown" && ["PageUp", "ArrowUp", "Home"].includes(ev.key)) state.follow = false;
    else if (atBottom()) state.follow = true;
  }

  // Safe Markdown lives in chat-markdown.js; citations become links to this turn's source cards.
  function renderMarkdown(container, text, turn) {
    window.DocMindMarkdown.render(container, text, turn ? (n) => citeLink(n, turn) : null);
  }

  function citeLink(n, turn) {
    const a = el("a", "cite", "[" + n + "]");
    a.href = "#";
    a.dataset.index = String(n);
    a.setAttribute("role", "button");
    a.addEventListener("click", (ev) => { ev.preventDefault(); highlightSource(turn, n); });
    return a;
  }

  function highlightSource(turn, n) {
    if (!turn) return;
    // A card folded among the uncited ones (an answer whose text cites more than its citation list) is opened too.
    const card = turn.sourcesWrap.querySelector('.source-card[data-index="' + n + '"]');
    if (!card) return;
    turn.sourcesWrap.open = true;
    if (turn.moreSources && turn.moreSources.contains(card)) turn.moreSources.open = true;
    document.querySelectorAll(".source-card.highlight").forEach((c) => c.classList.remove("highlight"));
    // Restart the flash animation even when the same card is clicked twice.
    void card.offsetWidth;
    card.classList.add("highlight");
    card.scrollIntoView({ behavior: "smooth", block: "center" });
  }

  // ---------- message blocks ----------
  function addUserMessage(text) {
    hideWelcome();
    const row = el("div", "msg msg-user");
    row.dataset.question = text;
    const bubble = el("div", "bubble");
    renderMarkdown(bubble, text, null);
    const tools = el("div", "msg-actions user-actions");
    const edit = actionButton(_("Edit"), _("Edit and send again"), () => editQuestion(row));
    edit.classList.add("edit-btn");
    tools.appendChild(edit);
    row.append(bubble, tools);
    els.messages.appendChild(row);
    scrollToBottom(true);
  }

  // The question is edited where it stands. The conversation's last question is rewritten and answered
  // again in place (the server replaces both rows' text); an earlier one is asked anew at the end, so no
  // later answer is left under a question it did not answer.
  function editQuestion(row) {
    if (state.streaming || row.querySelector(".edit-form")) return;
    const bubble = row.querySelector(".bubble");
    const form = el("form", "edit-form");
    const area = el("textarea", "edit-input");
    area.value = row.dataset.question;
    area.rows = Math.min(8, area.value.split("\n").length + 1);
    area.maxLength = maxChars;
    area.setAttribute("aria-label", _("Edit the question"));
    const send = el("button", "primary edit-send", _("Send"));
    send.type = "submit";
    const cancel = el("button", "edit-cancel", _("Cancel"));
    cancel.type = "button";
    const buttons = el("div", "edit-buttons");
    buttons.append(cancel, send);
    form.append(area, buttons);
    const close = () => { form.remove(); bubble.hidden = false; row.classList.remove("editing"); };
    cancel.addEventListener("click", close);
    area.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") { ev.preventDefault(); close(); }
      else if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = area.value.trim();
      if (!text || state.streaming) return;
      close();
      const questions = els.messages.querySelectorAll(".msg-user");
      if (state.conversationId && questions[questions.length - 1] === row) {
        let next = row.nextElementSibling;
        while (next) { const after = next.nextElementSibling; next.remove(); next = after; }
        row.dataset.question = text;
        renderMarkdown(bubble, text, null);
        startTurn(text, "edit");
      } else {
        startTurn(text);
      }
    });
    bubble.hidden = true;
    row.classList.add("editing");
    row.insertBefore(form, bubble);
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }

  function actionButton(label, title, onClick) {
    const b = el("button", "action-btn", label);
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", onClick);
    return b;
  }

  // Thumb outlines (Feather icons, MIT) drawn as SVG: an emoji needs a colour-emoji font many desktops lack.
  const THUMB_PATHS = {
    up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
    down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
  };
  function thumbIcon(direction) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("class", "icon");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", THUMB_PATHS[direction]);
    svg.appendChild(path);
    return svg;
  }
  function iconButton(direction, title, onClick) {
    const b = actionButton("", title, onClick);
    b.appendChild(thumbIcon(direction));
    return b;
  }

  // ---------- answer actions: copy, regenerate, feedback ----------
  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (e) {
      // Older browsers and some embedded views: the selection-based copy still works there.
      const area = el("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed"; area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      const ok = document.execCommand("copy");
      area.remove();
      return ok;
    }
  }

  function addAnswerActions(turn, messageId, question, feedback) {
    if (turn.actions) turn.actions.remove();
    const bar = el("div", "msg-actions answer-actions");
    turn.actions = bar;
    const copy = actionButton(_("Copy"), _("Copy the answer"), async () => {
      const ok = await copyText(turn.text);
      copy.textContent = ok ? _("Copied") : _("Copy failed");
      setTimeout(() => { copy.textContent = _("Copy"); }, 1500);
    });
    copy.classList.add("copy-btn");
    bar.appendChild(copy);
    if (question) {
      const again = actionButton(_("Regenerate"), _("Answer this question again"), () => { if (!state.streaming) regenerate(turn, question); });
      again.classList.add("regenerate-btn");
      bar.appendChild(again);
    }
    if (messageId) {
      const up = iconButton("up", _("Helpful"), () => sendFeedback(turn, messageId, "up", ""));
      const down = iconButton("down", _("Not helpful"), () => toggleFeedbackForm(turn, messageId));
      up.classList.add("fb-up"); down.classList.add("fb-down");
      turn.feedbackButtons = { up, down };
      bar.append(up, down);
      if (app.dataset.canEvaluate === "1") {
        const toEval = actionButton(_("Add to evaluation set"), _("Add this question to an evaluation set"),
          () => toggleEvalForm(turn, messageId));
        toEval.classList.add("eval-btn");
        bar.appendChild(toEval);
      }
    }
    turn.row.appendChild(bar);
    showFeedback(turn, feedback);
  }

  function showFeedback(turn, feedback) {
    if (!turn.feedbackButtons) return;
    const rating = feedback ? feedback.rating : "";
    turn.feedbackButtons.up.classList.toggle("chosen", rating === "up");
    turn.feedbackButtons.down.classList.toggle("chosen", rating === "down");
    turn.feedbackButtons.up.setAttribute("aria-pressed", String(rating === "up"));
    turn.feedbackButtons.down.setAttribute("aria-pressed", String(rating === "down"));
  }

  function toggleFeedbackForm(turn, messageId) {
    if (turn.feedbackForm) { turn.feedbackForm.remove(); turn.feedbackForm = null; return; }
    const form = el("form", "feedback-form");
    const area = el("textarea");
    area.rows = 2; area.maxLength = 2000;
    area.placeholder = _("What was wrong? (optional)");
    area.setAttribute("aria-label", _("Feedback"));
    const send = el("button", "primary", _("Send feedback"));
    send.type = "submit";
    form.append(area, send);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (await sendFeedback(turn, messageId, "down", area.value)) { form.remove(); turn.feedbackForm = null; }
    });
    turn.feedbackForm = form;
    turn.row.appendChild(form);
    area.focus();
  }

  // ---------- "add to evaluation set" (editors of a knowledge base) ----------
  let evalSets = null;
  async function loadEvalSets() {
    if (evalSets) return evalSets;
    const res = await fetch("/api/eval/sets/", { credentials: "same-origin" }).catch(() => null);
    evalSets = res && res.ok ? await res.json() : [];
    return evalSets;
  }

  // Expected answers typed as on the import template: | separates alternatives, && joins parts that must all appear.
  function parseExpected(text) {
    return text.split("|").map((alt) => alt.split("&&").map((p) => p.trim()).filter(Boolean))
      .filter((parts) => parts.length);
  }

  async function toggleEvalForm(turn, messageId) {
    if (turn.evalForm) { turn.evalForm.remove(); turn.evalForm = null; return; }
    const form = el("form", "eval-form");
    turn.evalForm = form;
    const picker = el("select");
    picker.setAttribute("aria-label", _("Evaluation set"));
    picker.appendChild(new Option(_("The base's default set"), ""));
    const expected = el("input");
    expected.type = "text"; expected.maxLength = 2000;
    expected.placeholder = _("Expected answer (optional; | separates alternatives)");
    expected.setAttribute("aria-label", _("Expected answer"));
    const send = el("button", "primary", _("Add"));
    send.type = "submit";
    const result = el("span", "eval-result");
    result.setAttribute("role", "status");
    form.append(picker, expected, send, result);
    turn.row.appendChild(form);
    // The form handles its submit before the sets arrive: a submit in between must not reach the browser's own
    // form submission, which would reload the page; until then it adds to the base's default set.
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      send.disabled = true;
      const res = await fetch("/api/eval/items/from-answer/", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify({ message: messageId, set: picker.value ? parseInt(picker.value, 10) : null,
          answers: parseExpected(expected.value) }),
      }).catch(() => null);
      send.disabled = false;
      const body = res ? await res.json().catch(() => ({})) : {};
      if (res && res.ok) {
        result.textContent = fmt(_("Added to “%(set)s”."), { set: body.set.name });
        result.classList.remove("bad");
        evalSets = null;  // a default set may have been made just now
      } else {
        result.textContent = (body && body.error) || _("The question was not added; please try again later.");
        result.classList.add("bad");
      }
    });
    expected.focus();
    for (const s of await loadEvalSets()) picker.appendChild(new Option(s.name + " · " + s.kb_name, String(s.id)));
  }

  async function sendFeedback(turn, messageId, rating, comment) {
    const res = await fetch("/api/messages/" + messageId + "/feedback/", {
      method: "PUT", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ rating, comment }),
    }).catch(() => null);
    if (!res || !res.ok) { showError(turn, _("The feedback was not saved; please try again later.")); return false; }
    showFeedback(turn, await res.json());
    return true;
  }

  function addAssistantTurn() {
    hideWelcome();
    const row = el("div", "msg msg-assistant");
    const turn = { row, text: "", sources: [], events: [], agentic: [], pending: false };
    turn.badges = el("div", "badges");
    turn.body = el("div", "answer md");
    turn.status = el("div", "status");
    turn.status.appendChild(el("span", "spinner"));
    turn.statusText = el("span", null, _("Understanding the question…"));
    turn.status.appendChild(turn.statusText);
    turn.sourcesWrap = el("details", "sources");
    turn.sourcesWrap.open = true;
    turn.sourcesWrap.hidden = true;
    turn.sourcesSummary = el("summary", null, _("Sources"));
    turn.sourcesWrap.appendChild(turn.sourcesSummary);
    turn.sourcesBox = el("div", "source-grid");
    turn.sourcesWrap.appendChild(turn.sourcesBox);
    turn.trace = el("details", "trace");
    turn.trace.appendChild(el("summary", null, _("Retrieval trace")));
    turn.traceBody = el("dl", "trace-body");
    turn.trace.appendChild(turn.traceBody);
    turn.trace.hidden = true;
    row.append(turn.badges, turn.status, turn.body, turn.sourcesWrap, turn.trace);
    els.messages.appendChild(row);
    scrollToBottom(true);
    return turn;
  }

  function badge(turn, text, kind, title) {
    const b = el("span", "badge" + (kind ? " badge-" + kind : ""), text);
    if (title) b.title = title;
    turn.badges.appendChild(b);
    return b;
  }

  // An answer an editor wrote for this question: labelled with who wrote it and when, never as generated.
  function curatedBadge(turn, curated) {
    const day = String(curated.updated_at || "").slice(0, 10);
    const text = curated.author ? fmt(_("Curated answer · %(author)s · %(date)s"), { author: curated.author, date: day })
      : fmt(_("Curated answer · %(date)s"), { date: day });
    return badge(turn, text, "curated", _("Written by an editor of this knowledge base for this question"));
  }

  function renderSources(turn, sources) {
    turn.sources = sources || [];
    turn.sourcesBox.replaceChildren();
    if (turn.moreSources) { turn.moreSources.remove(); turn.moreSources = null; }
    turn.sourcesWrap.hidden = !turn.sources.length;
    const related = turn.sources.length > 0 && turn.sources.every((s) => s.related);
    turn.sourcesLabel = related ? _("Related, but not an answer") : _("Sources");
    turn.sourcesSummary.textContent = turn.sourcesLabel + " · " + turn.sources.length;
    turn.sourcesWrap.classList.toggle("sources-related", related);
    for (const s of turn.sources) {
      const card = el("article", "source-card");
      card.dataset.index = String(s.index);
      const head = el("header", "source-head");
      head.appendChild(el("span", "source-num", s.index));
      const isWeb = s.source === "WEB";
      head.appendChild(el("span", "kind " + (isWeb ? "kind-web" : "kind-kb"), isWeb ? "WEB" : "KB"));
      const name = s.document_title || s.url || _("Untitled");
      const href = sourceHref(s);
      const title = el(href ? "a" : "span", "source-title", name);
      title.title = name;
      if (href) {
        title.href = href; title.target = "_blank"; title.rel = "noopener noreferrer";
        card.classList.add("openable");
        card.addEventListener("click", (ev) => { if (!ev.target.closest("a")) window.open(href, "_blank", "noopener"); });
      }
      head.appendChild(title);
      if (!href && !isWeb) {
        const note = el("span", "source-note", _("passage only"));
        note.title = _("Only this passage is shared with you, not the document.");
        head.appendChild(note);
      }
      const where = locationLabel(s.location);
      if (where) head.appendChild(el("span", "source-location", where));
      if (s.domain) head.appendChild(el("span", "source-domain", s.domain));
      card.appendChild(head);
      // The section path is said once, above the text, instead of being quoted as part of it.
      const section = String(s.context || "").split(" › ").slice(1).join(" › ");
      if (section) card.appendChild(el("p", "source-context", section));
      const snippet = plainSnippet(s.content);
      card.appendChild(el("p", "source-snippet", snippet.length > 280 ? snippet.slice(0, 280) + "…" : snippet));
      turn.sourcesBox.appendChild(card);
    }
  }

  // Where the passage is in the original: "p. 3", "Prices · rows 4–9", "slide 3".
  function locationLabel(loc) {
    if (!loc || typeof loc !== "object") return "";
    if (Number.isInteger(loc.page)) return fmt(_("p. %(page)s"), { page: loc.page });
    if (Array.isArray(loc.rows) && loc.rows.length === 2) {
      const rows = loc.rows[0] === loc.rows[1] ? fmt(_("row %(row)s"), { row: loc.rows[0] })
        : fmt(_("rows %(first)s–%(last)s"), { first: loc.rows[0], last: loc.rows[1] });
      return loc.sheet ? String(loc.sheet) + " · " + rows : rows;
    }
    if (Number.isInteger(loc.slide)) return fmt(_("slide %(slide)s"), { slide: loc.slide });
    return "";
  }

  // A KB source opens the document reader at the cited passage when the server gives its link, which it does
  // only for a document whose original this user may read (a view grant gets the snippet alone); a web source
  // opens its page.
  function sourceHref(s) {
    if (s.source === "WEB") return s.url && /^https?:\/\//i.test(s.url) ? s.url : "";
    const link = String(s.reader_url || "");
    return /^\/documents\/\d+\/(\?[\w=&]*)?#cited$/.test(link) ? link : "";
  }

  // Cards show text, not Markdown source: heading marks, emphasis and list bullets are dropped.
  function plainSnippet(text) {
    return String(text || "")
      .replace(/^\s{0,3}#{1,6}\s+/gm, "")
      .replace(/^\s*>\s?/gm, "")
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+/gm, "")
      .replace(/(\*\*|__|`)/g, "")
      .replace(/\s*\n\s*/g, " ")
      .trim();
  }

  // Once the answer is written, the passages it cites are its sources; the others retrieved with them are
  // folded away below (still one click from view), so that a card in plain sight is one the answer relies on.
  function markCited(turn, citations) {
    const used = new Set((citations || []).map((c) => String(c.index)));
    const cards = Array.from(turn.sourcesWrap.querySelectorAll(".source-card"))
      .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
    cards.forEach((card) => card.classList.toggle("cited", used.has(card.dataset.index)));
    if (turn.moreSources) { turn.moreSources.remove(); turn.moreSources = null; }
    const uncited = cards.filter((card) => !used.has(card.dataset.index));
    if (!used.size || !uncited.length || uncited.length === cards.length) {
      cards.forEach((card) => turn.sourcesBox.appendChild(card));
      turn.sourcesSummary.textContent = (turn.sourcesLabel || _("Sources")) + " · " + cards.length;
      return;
    }
    const more = el("details", "sources-more");
    more.appendChild(el("summary", null, _("Also retrieved, not cited") + " · " + uncited.length));
    const grid = el("div", "source-grid");
    uncited.forEach((card) => grid.appendChild(card));
    more.appendChild(grid);
    turn.sourcesWrap.appendChild(more);
    turn.moreSources = more;
    turn.sourcesSummary.textContent = _("Sources") + " · " + (cards.length - uncited.length);
  }

  // A cited card shows what its [n] quotes: the answer's text before that [n], found in the passage as this asker
  // received it (the trace's evidence: the passage where the original is readable, else its snippet), marked and
  // shown from just before it. Text written in other words than the passage's is found nowhere: the card keeps the
  // passage's opening.
  const REFS = /\[(\d+(?:\s*[,，、]\s*\d+)*)\]/g;
  function showQuoted(turn, answer, evidence) {
    const texts = new Map((evidence || []).map((c) => [String(c.chunk_id), plainSnippet(c.content)]));
    const quotes = new Map();
    for (const line of String(answer || "").split("\n")) {
      let from = 0;
      for (const ref of line.matchAll(REFS)) {
        const said = plainSnippet(line.slice(from, ref.index).replace(REFS, ""));
        from = ref.index + ref[0].length;
        if (said.length < 8) continue;
        for (const n of ref[1].split(/\s*[,，、]\s*/)) {
          if (!quotes.has(n)) quotes.set(n, []);
          quotes.get(n).push(said);
        }
      }
    }
    for (const card of turn.sourcesWrap.querySelectorAll(".source-card.cited")) {
      const source = (turn.sources || []).find((s) => String(s.index) === card.dataset.index);
      const text = source && texts.get(String(source.chunk_id));
      const quote = text && (quotes.get(card.dataset.index) || []).find((q) => text.includes(q));
      const box = card.querySelector(".source-snippet");
      if (!quote || !box) continue;
      const at = text.indexOf(quote);
      const start = Math.max(0, at - 30);
      const end = Math.min(text.length, at + quote.length + 160);
      box.replaceChildren((start > 0 ? "…" : "") + text.slice(start, at), el("mark", "quoted", quote),
        text.slice(at + quote.length, end) + (end < text.length ? "…" : ""));
    }
  }

  function traceRow(turn, label, value) {
    if (value === undefined || value === null || value === "") return;
    turn.traceBody.appendChild(el("dt", null, label));
    const dd = el("dd");
    if (Array.isArray(value)) {
      const ul = el("ul");
      value.forEach((v) => ul.appendChild(el("li", null, v)));
      dd.appendChild(ul);
    } else dd.textContent = String(value);
    turn.traceBody.appendChild(dd);
  }

  function fmtMs(map) {
    if (!map) return "";
    return Object.entries(map).map(([k, v]) => k + " " + Math.round(Number(v)) + "ms").join(" · ");
  }
  function chunkLine(c) {
    return "[" + c.source + "] " + (c.document_title || c.url || c.chunk_id) + " · " + Number(c.score).toFixed(3);
  }

  function args(a) {
    if (a === undefined || a === null) return "";
    const text = typeof a === "string" ? a : JSON.stringify(a);
    return text.length > 80 ? text.slice(0, 80) + "…" : text;
  }
  function agenticLine(d) {
    const calls = (d.tool_calls || []).map((c) => c.name + "(" + args(c.arguments) + ")").join("，");
    return fmt(_("Round %(round)s"), { round: d.round || "?" }) + (d.planner ? " (" + d.planner + ")" : "") + ": " + (calls || _("no tool calls"));
  }
  function toolLine(t) {
    if (typeof t === "string") return t;
    return "R" + (t.round || "?") + " " + t.name + "(" + args(t.arguments) + ") → " + fmt(_("%(count)s results"), { count: t.result_count ?? 0 }) +
      (t.error ? " · " + _("error") + ": " + t.error : "");
  }

  function renderTrace(turn, log) {
    turn.traceBody.replaceChildren();
    const ev = log || {};
    const route = ev.route || {};
    traceRow(turn, _("Route"), [route.mode, route.reason].filter(Boolean).join(" — "));
    traceRow(turn, _("Fallback"), [route.fallback_note || ev.agentic_fallback, ev.agentic_fallback_reason].filter(Boolean).join(" — "));
    const cls = ev.classification;
    if (cls) traceRow(turn, _("Understanding"), [cls.scope, cls.intent, cls.complexity, cls.is_ambiguous ? "ambiguous" : ""].filter(Boolean).join(" · "));
    if (cls && cls.rewritten) traceRow(turn, _("Rewritten as"), cls.rewritten + (cls.resolved && cls.resolved.length ? " (" + cls.resolved.join("; ") + ")" : ""));
    const a = ev.assessment;
    // The verdict's score is the evidence's, before the answer was written; the badge's is the answer's, re-estimated
    // on what it says and how much of it is cited: both are shown, each named, so the two figures never seem to disagree.
    if (a) traceRow(turn, _("Evidence verdict"), a.verdict + " · " + _("evidence") + " " + percent(Number(a.score)) +
      (typeof turn.confidenceScore === "number" ? " · " + _("answer") + " " + percent(turn.confidenceScore) : ""));
    if (ev.agenticRounds && ev.agenticRounds.length) traceRow(turn, _("Agentic rounds"), ev.agenticRounds);
    if (ev.agentic && ev.agentic.tool_calls && ev.agentic.tool_calls.length) traceRow(turn, _("Tool calls"), ev.agentic.tool_calls.map(toolLine));
    const g = ev.grade;
    if (g) traceRow(turn, _("Grade"), g.grade + " · rerank " + Number(g.rerank_top1).toFixed(3) + " · " + _("coverage") + " " + Number(g.lex_coverage).toFixed(2) + (g.reason ? " — " + g.reason : ""));
    if (ev.kb_chunks) traceRow(turn, _("Knowledge-base evidence") + " (" + ev.kb_chunks.length + ")", ev.kb_chunks.length ? ev.kb_chunks.map(chunkLine) : _("none"));
    if (ev.web_chunks) traceRow(turn, _("Web evidence") + " (" + ev.web_chunks.length + ")", ev.web_chunks.length ? ev.web_chunks.map(chunkLine) : _("none"));
    if (ev.cache && ev.cache.hit) traceRow(turn, _("Cache"), _("semantic cache hit") + ": " + ev.cache.question);
    traceRow(turn, _("Timings"), fmtMs(ev.timings_ms));
    const u = ev.usage;
    if (u && (u.input_tokens || u.output_tokens)) traceRow(turn, _("Tokens"), _("input") + " " + u.input_tokens + " · " + _("output") + " " + u.output_tokens + (u.cost != null ? " · " + _("cost") + " " + Number(u.cost).toFixed(6) : ""));
    if (ev.trace_id) traceRow(turn, _("Trace ID"), ev.trace_id);
    turn.trace.hidden = !turn.traceBody.childNodes.length;
  }

  function setStatus(turn, text) {
    if (!turn) return;
    if (text) { turn.status.hidden = false; turn.statusText.textContent = text; }
    else turn.status.hidden = true;
  }

  function scheduleRender(turn) {
    if (turn.pending) return;
    turn.pending = true;
    requestAnimationFrame(() => { turn.pending = false; renderMarkdown(turn.body, turn.text, turn); scrollToBottom(false); });
  }

  function showError(turn, message) {
    const box = el("div", "inline-error");
    box.setAttribute("role", "alert");
    box.textContent = message;
    (turn ? turn.row : els.messages).appendChild(box);
    scrollToBottom(true);
  }

  const MODE_LABEL = { RULE_PLANNER: _("One-shot retrieval"), AGENTIC: _("Multi-round retrieval"), SELECTED_DOC: _("Direct read") };
  function modeBadge(turn, route) {
    if (!route || !route.mode || route.mode === "META") return;
    const tip = route.mode + (route.reason ? " — " + route.reason : "") + (route.fallback_note ? "（" + route.fallback_note + "）" : "");
    badge(turn, MODE_LABEL[route.mode] || route.mode, "mode", tip);
  }
  const BAND_LABEL = { HIGH: _("High confidence"), MEDIUM: _("Medium confidence"), LOW: _("Low confidence"), NONE: _("No evidence") };
  // Badge, band and the low-relevance label come from the same band, so they cannot disagree.
  function lowLabel(turn) {
    if (!turn.lowShown) { turn.lowShown = true; badge(turn, _("Weakly related evidence"), "warn"); }
  }
  function noEvidenceBadge(turn) {
    if (!turn.noEvidenceShown) { turn.noEvidenceShown = true; badge(turn, _("No evidence found"), "warn"); }
    turn.row.classList.add("no-evidence");
  }
  // A share as a whole percent; a small one that is not nothing reads "<1%", never "0%" beside an answer that was given.
  function percent(share) {
    if (!Number.isFinite(share)) return "";
    return share > 0 && share < 0.005 ? "<1%" : Math.round(share * 100) + "%";
  }

  function confidenceBadge(turn, band, score) {
    band = String(band || "").toUpperCase();
    if (!band) return;
    // A NONE band says what the "No evidence found" badge already says: one badge, not two.
    if (band === "NONE" && turn.noEvidenceShown) return;
    if (band === "LOW") lowLabel(turn);
    if (typeof score === "number") turn.confidenceScore = score;
    const b = badge(turn, (BAND_LABEL[band] || band) + (typeof score === "number" && band !== "NONE" ? " " + percent(score) : ""), "band-" + band.toLowerCase(), _("Confidence: how well the evidence supports the answer"));
    b.classList.add("confidence");
  }

  // ---------- protocol ----------
  function handleEvent(type, data) {
    const turn = state.turn;
    if (!turn) { if (type === "error") showError(null, data.message || _("Something went wrong")); return; }
    turn.events.push(type);
    const log = turn.log || (turn.log = { timings_ms: {} });
    switch (type) {
      case "understanding":
        log.classification = data;
        if (data.resolved && data.resolved.length) badge(turn, _("Follows the conversation"), "mode", _("Understood as") + ": " + data.rewritten);
        setStatus(turn, _("Choosing how to search…"));
        break;
      case "routing":
        log.route = data;
        modeBadge(turn, data);
        setStatus(turn, data.mode === "META" ? _("Answering…") : _("Searching the knowledge base…"));
        break;
      case "agentic":
        (log.agenticRounds || (log.agenticRounds = [])).push(agenticLine(data));
        setStatus(turn, fmt(_("Agentic search, round %(round)s…"), { round: log.agenticRounds.length }));
        break;
      case "code_exec":
        (log.agenticRounds || (log.agenticRounds = [])).push(_("Code run") + ": " + (data.timed_out || data.exit_code !== 0 ? _("failed") : _("done")) + (data.duration_ms ? " · " + Math.round(data.duration_ms) + "ms" : ""));
        break;
      case "retrieval":
        log.kb_chunks = data.kb_chunks; log.web_chunks = data.web_chunks;
        Object.assign(log.timings_ms, data.timings_ms || {});
        if (data.cached) log.cache = { hit: true, question: "" };
        setStatus(turn, _("Reranking and grading the evidence…"));
        break;
      case "rerank": break;
      case "grader": log.grade = data; break;
      case "start":
        if (data.extractive) badge(turn, _("Extractive answer (offline)"), "extractive", _("No language model is connected: the answer is built from sentences of the evidence"));
        if (data.cached) badge(turn, _("Cached"), "cached", _("Nearly the same as an earlier question: its answer was reused"));
        if (data.low_confidence) lowLabel(turn);
        if (data.no_evidence) noEvidenceBadge(turn);
        if (data.curated) curatedBadge(turn, data.curated);
        renderSources(turn, data.sources);
        setStatus(turn, _("Writing the answer…"));
        break;
      case "token":
        turn.text += data.text || "";
        setStatus(turn, "");
        scheduleRender(turn);
        break;
      case "done":
        turn.text = data.answer || turn.text;
        renderMarkdown(turn.body, turn.text, turn);
        markCited(turn, data.citations);
        showQuoted(turn, turn.text, log.kb_chunks);
        confidenceBadge(turn, data.confidence_band, data.confidence_score);
        Object.assign(log.timings_ms, data.timings_ms || {});
        if (data.trace_id) log.trace_id = data.trace_id;
        if (data.usage) log.usage = data.usage;
        renderTrace(turn, log);
        setStatus(turn, "");
        addAnswerActions(turn, data.message_id, turn.question, null);
        if (data.conversation_id) adoptConversation(data.conversation_id);
        endTurn();
        scrollToBottom(false);
        break;
      case "error":
        setStatus(turn, "");
        if (turn.text) renderMarkdown(turn.body, turn.text, turn);
        if (data.code === "cancelled") { badge(turn, _("Stopped"), "muted"); }
        else showError(turn, data.message || _("Something went wrong"));
        if (data.conversation_id) adoptConversation(data.conversation_id);
        renderTrace(turn, log);
        addAnswerActions(turn, null, turn.question, null);
        endTurn();
        scrollToBottom(false);
        break;
    }
  }

  // The last answer is answered again in its place (the server replaces it); an earlier one is asked anew.
  function regenerate(turn, question) {
    const answers = els.messages.querySelectorAll(".msg-assistant");
    if (state.conversationId && answers.length && answers[answers.length - 1] === turn.row) {
      turn.row.remove();
      startTurn(question, "regenerate");
    } else {
      startTurn(question);
    }
  }

  // `redo` is "regenerate" (the last question answered again) or "edit" (the last question rewritten first).
  function startTurn(message, redo) {
    const docId = els.picker.value ? parseInt(els.picker.value, 10) : null;
    const kbPicker = $("kb-picker");
    const kb = kbPicker && kbPicker.value ? [parseInt(kbPicker.value, 10)] : null;
    const frame = { type: "ask", message, conversation_id: state.conversationId, document_id: docId, kb };
    if (redo) frame[redo] = true;
    else addUserMessage(message);
    state.turn = addAssistantTurn();
    state.turn.question = message;
    setStreaming(true);
    if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(frame));
    else { state.queued = frame; connect(); }
  }

  function endTurn() { state.turn = null; setStreaming(false); els.input.focus(); }

  function setStreaming(on) {
    state.streaming = on;
    els.input.disabled = on;
    els.send.disabled = on || els.input.value.length > maxChars;
    els.cancel.hidden = !on;
    els.picker.disabled = on;
    app.classList.toggle("is-streaming", on);
  }

  // ---------- WebSocket ----------
  function connect() {
    if (state.ws && (state.ws.readyState === WebSocket.OPEN || state.ws.readyState === WebSocket.CONNECTING)) return;
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/chat/";
    const ws = new WebSocket(url);
    state.ws = ws;
    els.conn.dataset.state = "connecting";
    ws.addEventListener("open", () => {
      state.retry = 0;
      els.conn.dataset.state = "open";
      els.conn.title = _("Connected");
      if (state.queued) { ws.send(JSON.stringify(state.queued)); state.queued = null; }
    });
    ws.addEventListener("message", (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (msg && typeof msg.type === "string") handleEvent(msg.type, msg.data || {});
    });
    ws.addEventListener("close", (ev) => {
      els.conn.dataset.state = "closed";
      els.conn.title = _("Disconnected; reconnecting…");
      if (state.turn) { showError(state.turn, _("The connection dropped before the answer finished. Your question is saved; you can try again.")); setStatus(state.turn, ""); endTurn(); }
      if (ev.code === 4401) { location.href = "/login/?next=/"; return; }
      state.retry = Math.min(state.retry + 1, 6);
      setTimeout(connect, 400 * 2 ** state.retry);
    });
  }

  // ---------- conversations ----------
  function adoptConversation(id) {
    const isNew = state.conversationId !== id;
    state.conversationId = id;
    const url = new URL(location.href);
    url.searchParams.set("c", id);
    history.replaceState(null, "", url);
    if (isNew || !els.convList.querySelector('.conv-item[data-id="' + id + '"]')) refreshConversations(id);
    else markActive(id);
  }

  function markActive(id) {
    els.convList.querySelectorAll(".conv-item").forEach((item) => item.classList.toggle("active", item.dataset.id === String(id)));
    const active = els.convList.querySelector('.conv-item[data-id="' + id + '"] .conv-link');
    els.title.textContent = active ? active.textContent : _("New chat");
  }

  function convItem(c) {
    const item = el("div", "conv-item");
    item.dataset.id = String(c.id);
    const a = el("a", "conv-link", c.title);
    a.href = "?c=" + c.id; a.dataset.id = String(c.id); a.title = c.title;
    const del = el("button", "conv-delete", "✕");
    del.type = "button"; del.dataset.id = String(c.id); del.setAttribute("aria-label", _("Delete the conversation"));
    item.append(a, del);
    return item;
  }

  async function refreshConversations(activeId) {
    try {
      const res = await fetch("/api/conversations/", { credentials: "same-origin" });
      if (!res.ok) return;
      const body = await res.json();
      const rows = body.results || body;
      els.convList.querySelectorAll(".conv-item").forEach((n) => n.remove());
      rows.forEach((c) => els.convList.appendChild(convItem(c)));
      els.convEmpty.hidden = rows.length > 0;
      markActive(activeId);
    } catch (e) { /* the list is a convenience; the chat keeps working */ }
  }

  async function openConversation(id) {
    if (state.streaming) return;
    const res = await fetch("/api/conversations/" + id + "/", { credentials: "same-origin" });
    if (!res.ok) { newChat(); return; }
    const conv = await res.json();
    clearMessages();
    state.conversationId = conv.id;
    let question = "";
    for (const m of conv.messages) {
      if (m.role === "user") { addUserMessage(m.content); question = m.content; continue; }
      const turn = addAssistantTurn();
      setStatus(turn, "");
      const log = m.retrieval_log || {};
      modeBadge(turn, log.route);
      if (log.extractive) badge(turn, _("Extractive answer (offline)"), "extractive", _("No language model is connected: the answer is built from sentences of the evidence"));
      if (log.cache && log.cache.hit) badge(turn, _("Cached"), "cached");
      if (log.curated) curatedBadge(turn, log.curated);
      renderSources(turn, log.sources || []);
      turn.text = m.content;
      renderMarkdown(turn.body, m.content, turn);
      markCited(turn, m.citations);
      showQuoted(turn, m.content, log.kb_chunks);
      confidenceBadge(turn, m.confidence_band, m.confidence_score);
      if (m.status === "error") showError(turn, m.error.replace(/^[a-z_]+: /, "") || _("The answer did not finish"));
      if (m.status === "cancelled") badge(turn, _("Stopped"), "muted");
      renderTrace(turn, log);
      addAnswerActions(turn, m.status === "complete" ? m.id : null, question, m.feedback);
    }
    markActive(conv.id);
    const url = new URL(location.href); url.searchParams.set("c", conv.id); history.replaceState(null, "", url);
    scrollToBottom(true);
  }

  function clearMessages() {
    els.messages.querySelectorAll(".msg, .inline-error").forEach((n) => n.remove());
  }
  function hideWelcome() { els.welcome.hidden = true; }

  function newChat() {
    if (state.streaming) return;
    clearMessages();
    els.welcome.hidden = false;
    state.conversationId = null;
    const url = new URL(location.href); url.searchParams.delete("c"); history.replaceState(null, "", url);
    markActive(null);
    els.input.focus();
    app.classList.remove("sidebar-open");
  }

  async function deleteConversation(id) {
    if (!confirm(_("Delete this conversation? This cannot be undone."))) return;
    const res = await fetch("/api/conversations/" + id + "/", {
      method: "DELETE", credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() },
    });
    if (res.ok || res.status === 404) {
      const item = els.convList.querySelector('.conv-item[data-id="' + id + '"]');
      if (item) item.remove();
      els.convEmpty.hidden = !!els.convList.querySelector(".conv-item");
      if (String(state.conversationId) === String(id)) newChat();
    }
  }

  async function renameConversation() {
    if (!state.conversationId || state.streaming) return;
    const title = prompt(_("Rename the conversation"), els.title.textContent);
    if (title === null || !title.trim()) return;
    const res = await fetch("/api/conversations/" + state.conversationId + "/", {
      method: "PATCH", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ title: title.trim() }),
    });
    if (res.ok) refreshConversations(state.conversationId);
  }

  // ---------- wiring ----------
  // Nothing is cut silently: an over-long question (typed or pasted) stays whole in the box, with a
  // warning, and cannot be sent until it fits.
  function autosize() {
    els.input.style.height = "auto";
    els.input.style.height = Math.min(els.input.scrollHeight, 220) + "px";
    const n = els.input.value.length;
    const over = n > maxChars;
    els.charCount.textContent = n > maxChars * 0.8 ? n + " / " + maxChars : "";
    els.charCount.classList.toggle("over", over);
    els.lengthWarning.hidden = !over;
    if (over) els.lengthWarning.textContent = fmt(_("The text has %(n)s characters, over the limit of %(max)s: remove %(extra)s characters to send it."), { n, max: maxChars, extra: n - maxChars });
    if (!state.streaming) els.send.disabled = over;
  }

  els.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = els.input.value.trim();
    if (!text || state.streaming) return;
    if (text.length > maxChars) { showError(null, fmt(_("The question is too long: at most %(max)s characters."), { max: maxChars })); return; }
    els.input.value = "";
    autosize();
    startTurn(text);
  });
  els.input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); els.form.requestSubmit(); }
  });
  els.input.addEventListener("input", autosize);
  els.input.addEventListener("paste", () => setTimeout(autosize, 0));
  els.messages.addEventListener("wheel", onReaderScroll, { passive: true });
  els.messages.addEventListener("touchmove", () => { state.follow = atBottom(); }, { passive: true });
  els.messages.addEventListener("keydown", onReaderScroll);
  els.messages.addEventListener("scroll", () => { if (atBottom()) state.follow = true; }, { passive: true });
  els.cancel.addEventListener("click", () => {
    if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify({ type: "cancel" }));
  });
  $("new-chat").addEventListener("click", newChat);
  els.title.addEventListener("click", renameConversation);
  els.convList.addEventListener("click", (ev) => {
    const del = ev.target.closest(".conv-delete");
    if (del) { ev.preventDefault(); deleteConversation(del.dataset.id); return; }
    const link = ev.target.closest(".conv-link");
    if (link) { ev.preventDefault(); openConversation(link.dataset.id); app.classList.remove("sidebar-open"); }
  });
  document.querySelectorAll(".suggestion").forEach((b) => b.addEventListener("click", () => {
    if (!state.streaming) startTurn(b.textContent.trim());
  }));
  // Choosing a knowledge base narrows the document list to its documents.
  const kbPicker = $("kb-picker");
  if (kbPicker) kbPicker.addEventListener("change", () => {
    Array.from(els.picker.options).forEach((o) => {
      if (!o.value) return;
      o.hidden = !!kbPicker.value && o.dataset.kb !== kbPicker.value;
    });
    if (els.picker.selectedOptions[0] && els.picker.selectedOptions[0].hidden) {
      els.picker.value = "";
      els.picker.dispatchEvent(new Event("change"));
    }
  });
  els.picker.addEventListener("change", () => {
    const opt = els.picker.selectedOptions[0];
    els.docNote.textContent = els.picker.value
      ? fmt(_("Limited to: %(title)s (say “summarise this document” to have it read)"), { title: opt.textContent })
      : _("Enter sends · Shift+Enter for a new line");
  });
  const open = $("open-sidebar"), close = $("close-sidebar");
  if (open) open.addEventListener("click", () => app.classList.add("sidebar-open"));
  if (close) close.addEventListener("click", () => app.classList.remove("sidebar-open"));

  connect();
  const initial = new URL(location.href).searchParams.get("c");
  if (initial && /^\d+$/.test(initial)) openConversation(initial);
  else els.input.focus();
})();
