// "My memories" page: list, add, edit, forget one, forget all — all over /api/memories/ (the caller's own only).
// Memory text is user data: it is only ever set with textContent, never as HTML.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const _ = window.gettext || ((text) => text);
  const ngettext = window.ngettext || ((one, many, n) => (n === 1 ? one : many));
  const fmt = (text, values) => (window.interpolate ? window.interpolate(text, values, true)
    : text.replace(/%\((\w+)\)s/g, (m, k) => values[k]));
  const typeName = (t) => ({ preference: _("preference"), fact: _("fact"), profile: _("profile"),
    instruction: _("instruction") })[t] || t;
  const rows = $("mem-rows");
  const errorBox = $("mem-error");

  function csrfToken() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  async function api(path, options) {
    const opts = Object.assign({ credentials: "same-origin", headers: {} }, options || {});
    if (opts.method && opts.method !== "GET") {
      opts.headers["X-CSRFToken"] = csrfToken();
      if (opts.body) opts.headers["Content-Type"] = "application/json";
    }
    const res = await fetch("/api/memories/" + path, opts);
    if (res.status === 204) return null;
    const body = await res.json().catch(() => ({}));
    if (!res.ok) {
      const first = Object.values(body)[0];
      throw new Error(Array.isArray(first) ? first[0] : (body.detail || fmt(_("Request failed (%(status)s)."), { status: res.status })));
    }
    return body;
  }

  function showError(message) {
    errorBox.textContent = message || "";
    errorBox.hidden = !message;
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function typeSelect(value) {
    const select = el("select");
    select.innerHTML = $("mem-type-options").innerHTML; // server-rendered, trusted option list
    select.value = value;
    return select;
  }

  function render(items) {
    rows.replaceChildren();
    for (const m of items) rows.appendChild(row(m));
    $("mem-table").hidden = items.length === 0;
    $("mem-empty").hidden = items.length !== 0;
    $("mem-forget-all").hidden = items.length === 0;
    $("mem-count").textContent = items.length
      ? fmt(ngettext("%(n)s memory", "%(n)s memories", items.length), { n: items.length }) : "";
  }

  function row(m) {
    const tr = el("tr");
    tr.dataset.id = m.id;
    const type = el("td");
    type.appendChild(el("span", "mem-type", typeName(m.memory_type)));
    const content = el("td", "mem-content", m.content);
    const when = el("td", "muted", new Date(m.created_at).toLocaleString());
    const used = el("td", "muted", String(m.access_count));
    const actions = el("td", "mem-actions");
    const edit = el("button", "edit", _("Edit"));
    edit.type = "button";
    edit.addEventListener("click", () => startEdit(tr, m));
    const forget = el("button", "forget", _("Forget"));
    forget.type = "button";
    forget.addEventListener("click", async () => {
      if (!confirm(_("Forget this memory?") + "\n" + m.content)) return;
      try { await api(m.id + "/", { method: "DELETE" }); showError(""); await load(); }
      catch (e) { showError(e.message); }
    });
    actions.append(edit, forget);
    tr.append(type, content, when, used, actions);
    return tr;
  }

  function startEdit(tr, m) {
    const cells = tr.children;
    const select = typeSelect(m.memory_type);
    const area = el("textarea");
    area.value = m.content;
    area.maxLength = 1000;
    cells[0].replaceChildren(select);
    cells[1].replaceChildren(area);
    cells[1].className = "mem-row-edit";
    cells[0].className = "mem-row-edit";
    const save = el("button", "save", _("Save"));
    save.type = "button";
    const cancel = el("button", "cancel", _("Cancel"));
    cancel.type = "button";
    cells[4].replaceChildren(save, cancel);
    area.focus();
    cancel.addEventListener("click", () => load());
    save.addEventListener("click", async () => {
      try {
        await api(m.id + "/", { method: "PATCH", body: JSON.stringify({ content: area.value, memory_type: select.value }) });
        showError("");
        await load();
      } catch (e) { showError(e.message); }
    });
  }

  async function load() {
    const items = [];
    let more = true;
    for (let page = 1; page <= 20 && more; page++) {
      const body = await api("?page=" + page);
      items.push(...body.results);
      more = Boolean(body.next);
    }
    render(items);
  }

  $("mem-add").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("mem-add-content");
    if (!input.value.trim()) { showError(_("The content must not be empty.")); return; }
    try {
      await api("", { method: "POST", body: JSON.stringify({ content: input.value, memory_type: $("mem-add-type").value }) });
      input.value = "";
      showError("");
      await load();
    } catch (e) { showError(e.message); }
  });

  $("mem-forget-all").addEventListener("click", async () => {
    if (!confirm(_("Forget everything DocMind remembers about you? None of it will be used again."))) return;
    try { await api("forget-all/", { method: "POST" }); showError(""); await load(); }
    catch (e) { showError(e.message); }
  });

  load().catch((e) => showError(e.message));
})();
