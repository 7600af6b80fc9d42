/* The widget's frame: asks POST /api/chat/ with the page's ask-only key and the frame's ticket, and shows
 * the streamed answer with its sources. No cookies are sent: the widget never acts as a signed-in user. */
(function () {
  "use strict";
  var body = document.body;
  var log = document.querySelector(".widget-log");
  var form = document.querySelector(".widget-form");
  var input = form.querySelector("input");
  var button = form.querySelector("button");

  function item(cls, text) {
    var li = document.createElement("li");
    li.className = cls;
    li.textContent = text;
    log.appendChild(li);
    log.scrollTop = log.scrollHeight;
    return li;
  }

  function showSources(answer, citations) {
    if (!citations || !citations.length) { return; }
    var list = document.createElement("ol");
    list.className = "sources";
    list.setAttribute("aria-label", body.dataset.sources);
    citations.forEach(function (c) {
      var entry = document.createElement("li");
      entry.value = c.index;
      entry.textContent = c.document_title || c.url || "";
      list.appendChild(entry);
    });
    answer.appendChild(list);
  }

  function handle(answer, type, data) {
    if (type === "token") {
      answer.firstChild.textContent += data.text || data.token || "";
    } else if (type === "done") {
      answer.firstChild.textContent = data.answer || answer.firstChild.textContent;
      showSources(answer, data.citations);
    } else if (type === "error") {
      answer.firstChild.textContent = data.message || body.dataset.error;
    }
    log.scrollTop = log.scrollHeight;
  }

  async function ask(question) {
    item("q", question);
    var answer = item("a", "");
    answer.appendChild(document.createTextNode(""));
    var response = await fetch("/api/chat/", {
      method: "POST", credentials: "omit",
      headers: {"Content-Type": "application/json", "Authorization": "Bearer " + body.dataset.key,
                "X-DocMind-Widget": body.dataset.ticket, "Accept-Language": document.documentElement.lang},
      body: JSON.stringify({message: question})
    });
    if (!response.ok || !response.body) {
      var problem = await response.json().catch(function () { return {}; });
      answer.firstChild.textContent = problem.error || body.dataset.error;
      return;
    }
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) { break; }
      buffer += decoder.decode(chunk.value, {stream: true});
      var blocks = buffer.split("\n\n");
      buffer = blocks.pop();
      blocks.forEach(function (block) {
        var type = "", data = "";
        block.split("\n").forEach(function (line) {
          if (line.indexOf("event:") === 0) { type = line.slice(6).trim(); }
          else if (line.indexOf("data:") === 0) { data += line.slice(5).trim(); }
        });
        if (type && data) {
          try { handle(answer, type, JSON.parse(data)); } catch (e) { /* a heartbeat or a partial line */ }
        }
      });
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var question = input.value.trim();
    if (!question) { return; }
    input.value = "";
    button.disabled = true;
    ask(question).catch(function () { item("a", body.dataset.error); })
      .finally(function () { button.disabled = false; input.focus(); });
  });
})();
