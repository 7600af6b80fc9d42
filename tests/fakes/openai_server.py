"""A scripted OpenAI-compatible HTTP server on loopback for tests that drive the real openai client.

Usage (through the ``scripted_openai`` fixture of ``tests.fakes.plugin``)::

    def test_it_streams(scripted_openai):
        scripted_openai.script(["Hello [1]"])                       # one plain-text reply
        model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=2)
        ...
        assert scripted_openai.requests[0]["messages"][-1]["content"] == "question"

API
- ``base_url`` — ``http://127.0.0.1:<port>/v1``; any API key is accepted.
- ``script(replies, model=None)`` — append replies to a FIFO queue. An item is a ``str`` (a text
  reply) or a ``ScriptedReply`` built with ``text()``, ``tool_calls()``, ``http_error()``,
  ``delayed()``. With ``model=…`` the replies go to a queue used only for requests naming that
  model (e.g. the classifier's small model); other requests take the shared queue.
- ``respond_with(fn)`` — ``fn(body) -> str | ScriptedReply`` answers requests when the queues
  are empty (handy for many-turn tests). With neither, the server answers HTTP 500 with
  "no scripted reply left", so a missing script fails loudly.
- ``requests`` — every ``/v1/chat/completions`` JSON body received, in order (including client
  retries); ``embedding_requests`` likewise for ``/v1/embeddings``.
- The same script answers streaming (``"stream": true`` → SSE chunks ending with ``[DONE]``) and
  non-streaming calls; tool calls appear in both, arguments as raw text (malformed JSON allowed).
- ``http_error(500, times=3)`` answers three consecutive requests with the status: remember the
  client retries (``OpenAIChatModel`` retries twice, so three 500s exhaust it). Error replies carry
  ``Retry-After-Ms: 1``, so those retries follow at once instead of after the client's backoff.
  ``message=…`` sets the error body's ``error.message`` (how a service says what it refused).
- ``text(..., usage=(prompt, completion))`` / ``tool_calls(..., usage=…)`` report those token counts
  in the ``usage`` fields (non-streaming body; streaming: a last chunk when the request asks with
  ``stream_options.include_usage``); without it the fields are zeros.
- ``delayed(seconds, reply)`` sleeps before answering (longer than the client timeout → timeout);
  the sleep is cut short when the server stops.
- ``/v1/embeddings`` answers deterministic 8-dimensional vectors derived from the text.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.serving import serve_in_thread


@dataclass(frozen=True)
class ScriptedReply:
    content: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, raw arguments)
    status: int = 200
    delay: float = 0.0
    chunk_chars: int = 4  # streamed content is cut into deltas of this many characters
    finish_reason: str = ""
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); None reports zeros


def text(content: str, *, chunk_chars: int = 4, usage: tuple[int, int] | None = None) -> ScriptedReply:
    return ScriptedReply(content=content, chunk_chars=chunk_chars, usage=usage)


def tool_calls(*calls: tuple[str, dict | str], content: str = "",
               usage: tuple[int, int] | None = None) -> ScriptedReply:
    """Tool calls given as (name, arguments); a str argument is sent verbatim (may be malformed)."""
    built = tuple((f"call_{i}_{name}", name, a if isinstance(a, str) else json.dumps(a, ensure_ascii=False))
                  for i, (name, a) in enumerate(calls))
    return ScriptedReply(content=content, tool_calls=built, usage=usage)


def http_error(status: int = 500, *, times: int = 1, message: str = "") -> list[ScriptedReply]:
    return [ScriptedReply(content=message, status=status)] * times


def delayed(seconds: float, reply: str | ScriptedReply = "") -> ScriptedReply:
    base = text(reply) if isinstance(reply, str) else reply
    return ScriptedReply(base.content, base.tool_calls, base.status, seconds, base.chunk_chars, base.finish_reason,
                         base.usage)


Responder = Callable[[dict[str, Any]], "str | ScriptedReply"]


class ScriptedOpenAIServer:
    def __init__(self) -> None:
        self._queue: deque[ScriptedReply] = deque()
        self._by_model: dict[str, deque[ScriptedReply]] = {}
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedOpenAIServer:
        serve_in_thread(self._httpd, name="scripted-openai")
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, replies: Iterable[str | ScriptedReply | list[ScriptedReply]], *, model: str | None = None) -> None:
        flat: list[ScriptedReply] = []
        for item in replies:
            if isinstance(item, list):
                flat.extend(item)
            else:
                flat.append(text(item) if isinstance(item, str) else item)
        with self._lock:
            target = self._queue if model is None else self._by_model.setdefault(model, deque())
            target.extend(flat)

    def respond_with(self, responder: Responder | None) -> None:
        self._responder = responder

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + sum(len(q) for q in self._by_model.values())

    def _next_reply(self, body: dict[str, Any]) -> ScriptedReply:
        with self._lock:
            self.requests.append(body)
            queue = self._by_model.get(str(body.get("model", "")))
            if queue:
                return queue.popleft()
            if self._queue:
                return self._queue.popleft()
        if self._responder is not None:
            got = self._responder(body)
            return text(got) if isinstance(got, str) else got
        return ScriptedReply(content="no scripted reply left", status=500)

    def _wait(self, seconds: float) -> bool:
        """Sleep; False when the server is stopping (then the handler just gives up)."""
        return not self._stopping.wait(seconds)

    def _completion_id(self) -> str:
        return f"chatcmpl-scripted-{next(self._ids)}"


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10  # idle keep-alive connections end, so handler threads don't outlive the test for long

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "invalid JSON body", "type": "invalid_request_error"}})
                return
            try:
                if self.path.rstrip("/").endswith("/chat/completions"):
                    self._chat(body)
                elif self.path.rstrip("/").endswith("/embeddings"):
                    self._embeddings(body)
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test): nothing to answer

        def _chat(self, body: dict[str, Any]) -> None:
            reply = server._next_reply(body)
            if reply.delay and not server._wait(reply.delay):
                return
            if reply.status != 200:
                # The openai client honours Retry-After-Ms before its own backoff (half a second, doubling, for
                # each retry): the fake asks for an immediate retry, so retry tests count retries, not seconds.
                self._json(reply.status, {"error": {"message": reply.content or f"scripted HTTP {reply.status}",
                                                    "type": "server_error"}}, headers={"Retry-After-Ms": "1"})
                return
            model = str(body.get("model", "scripted"))
            finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
            if body.get("stream"):
                self._stream(reply, model, finish, bool((body.get("stream_options") or {}).get("include_usage")))
            else:
                self._json(200, _completion(server._completion_id(), model, reply, finish))

        def _stream(self, reply: ScriptedReply, model: str, finish: str, include_usage: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            cid = server._completion_id()
            deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
            step = max(1, reply.chunk_chars)
            deltas += [{"content": reply.content[i:i + step]} for i in range(0, len(reply.content), step)]
            for i, (tid, name, args) in enumerate(reply.tool_calls):
                deltas.append({"tool_calls": [{"index": i, "id": tid, "type": "function",
                                               "function": {"name": name, "arguments": ""}}]})
                half = len(args) // 2  # arguments arrive in pieces, as real servers send them
                for piece in (args[:half], args[half:]):
                    deltas.append({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
            for delta in deltas:
                self._sse(_chunk(cid, model, delta, None))
            self._sse(_chunk(cid, model, {}, finish))
            if include_usage:  # as OpenAI sends it: a last chunk without choices
                self._sse({**_chunk(cid, model, {}, None), "choices": [], "usage": _usage(reply)})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _sse(self, payload: dict[str, Any]) -> None:
            self.wfile.write(b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n")
            self.wfile.flush()

        def _embeddings(self, body: dict[str, Any]) -> None:
            server.embedding_requests.append(body)
            inputs = body.get("input", [])
            inputs = [inputs] if isinstance(inputs, str) else list(inputs)
            data = [{"object": "embedding", "index": i, "embedding": _vector(str(t))} for i, t in enumerate(inputs)]
            self._json(200, {"object": "list", "data": data, "model": body.get("model", "scripted"),
                             "usage": {"prompt_tokens": 0, "total_tokens": 0}})

        def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            self.wfile.flush()

    return Handler


def _completion(cid: str, model: str, reply: ScriptedReply, finish: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [{"id": tid, "type": "function", "function": {"name": name, "arguments": args}}
                                 for tid, name, args in reply.tool_calls]
    return {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": _usage(reply)}


def _usage(reply: ScriptedReply) -> dict[str, int]:
    prompt, completion = reply.usage or (0, 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}


def _vector(text_: str) -> list[float]:
    digest = hashlib.sha256(text_.encode()).digest()
    return [(b - 127.5) / 127.5 for b in digest[:8]]
