"""SearxngWebSearch against a tiny loopback HTTP server."""
from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from docmind.websearch import SearxngWebSearch, WebSearchError
from kb.retrieval.types import Source
from tests.fakes.serving import serve_in_thread


class _Searx:
    def __init__(self) -> None:
        self.payload: object = {"results": []}
        self.status = 200
        self.delay = 0.0
        self.seen: list[tuple[dict, str | None]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:
                outer.seen.append((parse_qs(urlparse(self.path).query), self.headers.get("Authorization")))
                if outer.delay:
                    threading.Event().wait(outer.delay)
                raw = json.dumps(outer.payload).encode()
                # A client that gave up waiting (the delay tests) has closed the connection: nothing to report.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(outer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        serve_in_thread(self.httpd)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/search"


@pytest.fixture
def searx() -> Iterator[_Searx]:
    server = _Searx()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_it_turns_results_into_web_chunks(searx):
    searx.payload = {"results": [
        {"url": "https://a.example/1", "title": "A", "content": "alpha facts"},
        {"url": "https://b.example/2", "title": "B", "content": "beta facts"},
        {"url": "https://c.example/3", "title": "C", "content": "gamma"},
    ]}
    chunks = SearxngWebSearch(url=searx.url, api_key="secret", timeout=2).search("what is alpha", k=2)
    assert [c.url for c in chunks] == ["https://a.example/1", "https://b.example/2"]
    assert all(c.source == Source.WEB for c in chunks)
    assert chunks[0].score > chunks[1].score and chunks[0].content == "alpha facts"
    query, auth = searx.seen[0]
    assert query["q"] == ["what is alpha"] and query["format"] == ["json"] and auth == "Bearer secret"


def test_it_skips_malformed_items(searx):
    searx.payload = {"results": ["junk", {"title": "no url"}, {"url": "https://ok.example", "content": "ok"}]}
    chunks = SearxngWebSearch(url=searx.url).search("q", k=5)
    assert [c.url for c in chunks] == ["https://ok.example"]


@pytest.mark.parametrize("status,payload", [(500, {"error": "boom"}), (200, {"nothing": 1}), (200, [1, 2])])
def test_it_raises_on_a_bad_answer(searx, status, payload):
    searx.status, searx.payload = status, payload
    with pytest.raises(WebSearchError):
        SearxngWebSearch(url=searx.url).search("q", k=3)


def test_it_raises_on_timeout(searx):
    searx.delay = 1.0
    with pytest.raises(WebSearchError, match="timed out"):
        SearxngWebSearch(url=searx.url, timeout=0.2).search("q", k=3)


def test_the_key_is_not_in_its_repr(searx):
    assert "secret" not in repr(SearxngWebSearch(url=searx.url, api_key="secret"))


def test_the_factory_is_off_by_default_and_on_with_a_url(settings, searx):
    from docmind.backends import get_web_search
    from docmind.env import ServiceEndpoint

    get_web_search.cache_clear()
    try:
        assert get_web_search() is None
        settings.WEB_SEARCH_ENDPOINT = ServiceEndpoint(url=searx.url, api_key="k", model="")
        get_web_search.cache_clear()
        assert isinstance(get_web_search(), SearxngWebSearch)
    finally:
        get_web_search.cache_clear()
