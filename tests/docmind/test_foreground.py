"""Background steps give way to requests being answered, for a bounded time."""
import threading
import time

from docmind.foreground import busy, foreground, give_way


def test_with_nothing_in_the_foreground_giving_way_does_not_wait(monkeypatch):
    import docmind.foreground as fg

    monkeypatch.setattr(fg, "LINGER_SECONDS", 0.0)  # another test's request may have ended a moment ago
    assert not busy()
    assert give_way(max_wait=5.0) == 0.0


def test_a_background_step_waits_until_the_request_ends():
    started, release = threading.Event(), threading.Event()

    def request():
        with foreground():
            started.set()
            release.wait(5)

    thread = threading.Thread(target=request)
    thread.start()
    started.wait(5)
    threading.Timer(0.2, release.set).start()
    waited = give_way(max_wait=5.0)
    thread.join(5)
    assert 0.15 <= waited < 4.0 and not busy()


def test_a_background_step_waits_no_longer_than_its_bound():
    with foreground():
        start = time.monotonic()
        give_way(max_wait=0.1)
        assert 0.09 <= time.monotonic() - start < 2.0


def test_nested_and_concurrent_requests_add_up():
    with foreground():
        with foreground():
            assert busy()
        assert busy()
    assert not busy()


def test_a_request_that_fails_leaves_the_foreground():
    try:
        with foreground():
            raise ValueError("boom")
    except ValueError:
        pass
    assert not busy()


def test_a_background_step_waits_a_moment_after_the_last_request(monkeypatch):
    # the next stage of the same question follows at once: resuming in between would hold it up
    import docmind.foreground as fg

    monkeypatch.setattr(fg, "LINGER_SECONDS", 0.2)
    with foreground():
        pass
    assert 0.1 <= give_way(max_wait=5.0) < 2.0
    assert give_way(max_wait=5.0) == 0.0
