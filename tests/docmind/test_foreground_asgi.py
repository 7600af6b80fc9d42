"""A question's HTTP request is foreground work until its answer starts; an upload waits at the door for it."""
import asyncio
import threading
import time

import docmind.foreground_asgi as door
from docmind.foreground import busy, foreground, wait_left


def _http(path: str, method: str = "POST") -> dict:
    return {"type": "http", "path": path, "method": method}


async def _nothing_received() -> dict:
    return {"type": "http.request", "body": b"", "more_body": False}


def test_a_question_is_foreground_until_its_response_starts_and_not_after():
    seen: dict[str, bool] = {}

    async def app(scope, receive, send):
        seen["while handled"] = busy()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        seen["after the start"] = busy()
        await send({"type": "http.response.body", "body": b"{}"})

    sent: list[str] = []

    async def send(message):
        sent.append(message["type"])

    asyncio.run(door.QuestionsFirst(app)(_http("/api/kb/retrieve/"), _nothing_received, send))
    assert seen == {"while handled": True, "after the start": False}
    assert sent == ["http.response.start", "http.response.body"] and not busy()


def test_a_server_mounted_under_a_prefix_still_tells_a_question():
    seen: list[bool] = []

    async def app(scope, receive, send):
        seen.append(busy())

    scope = {**_http("/docmind/api/kb/retrieve/"), "root_path": "/docmind"}
    asyncio.run(door.QuestionsFirst(app)(scope, _nothing_received, None))
    assert seen == [True]


def test_a_question_that_fails_before_answering_is_no_longer_foreground():
    async def app(scope, receive, send):
        raise RuntimeError("the view failed")

    async def send(message):
        pass

    try:
        asyncio.run(door.QuestionsFirst(app)(_http("/api/chat/"), _nothing_received, send))
    except RuntimeError:
        pass
    assert not busy()


def test_other_requests_are_not_foreground():
    seen: list[bool] = []

    async def app(scope, receive, send):
        seen.append(busy())

    asyncio.run(door.QuestionsFirst(app)(_http("/api/kb/documents/", "GET"), _nothing_received, None))
    asyncio.run(door.QuestionsFirst(app)({"type": "lifespan"}, _nothing_received, None))
    assert seen == [False, False]


def test_an_upload_waits_at_the_door_until_the_question_in_flight_ends():
    started, release = threading.Event(), threading.Event()

    def question():
        with foreground():
            started.set()
            release.wait(5)

    reached: list[float] = []

    async def app(scope, receive, send):
        reached.append(time.monotonic())

    thread = threading.Thread(target=question)
    thread.start()
    started.wait(5)
    begun = time.monotonic()
    threading.Timer(0.1, release.set).start()
    asyncio.run(door.QuestionsFirst(app)(_http("/api/kb/documents/"), _nothing_received, None))
    thread.join(5)
    # Not before the question ended, nor later than its linger and one recheck after it.
    assert 0.09 <= reached[0] - begun < door.MAX_WAIT_SECONDS + 0.5


def test_an_upload_with_no_question_in_flight_goes_straight_in(monkeypatch):
    import docmind.foreground as fg

    monkeypatch.setattr(fg, "LINGER_SECONDS", 0.0)  # another test's question may have ended a moment ago
    assert wait_left() == 0.0
    reached: list[float] = []

    async def app(scope, receive, send):
        reached.append(time.monotonic())

    begun = time.monotonic()
    asyncio.run(door.QuestionsFirst(app)(_http("/api/kb/documents/"), _nothing_received, None))
    assert reached[0] - begun < 0.05


def test_an_upload_waits_no_longer_than_the_bound_for_a_stream_of_questions(monkeypatch):
    monkeypatch.setattr(door, "MAX_WAIT_SECONDS", 0.1)
    reached: list[float] = []

    async def app(scope, receive, send):
        reached.append(time.monotonic())

    with foreground():
        begun = time.monotonic()
        asyncio.run(door.QuestionsFirst(app)(_http("/api/kb/documents/archive/"), _nothing_received, None))
    assert 0.09 <= reached[0] - begun < 2.0


def test_the_paths_name_the_question_and_upload_views():
    from django.urls import resolve

    names = {path: resolve(path).url_name for path in door.QUESTION_PATHS | door.UPLOAD_PATHS}
    assert names == {"/api/kb/retrieve/": "retrieve", "/api/chat/": "api-chat",
                     "/api/kb/documents/": "document-list", "/api/kb/documents/archive/": "document-archive",
                     "/admin/kb/document/add/": "kb_document_add", "/admin/kb/document/upload/": "kb_document_upload"}
