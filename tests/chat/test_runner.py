"""The turn runner: bounded pool, busy answer, heartbeats, the deadline, cancel and the call budget."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from chat.events import ChatEvent
from chat.runner import HEARTBEAT, ServerBusy, TooManyTurns, TurnLimits, TurnRunner
from docmind.llm.budget import current_budget


def _runner(workers: int = 2, queue: int = 0, deadline: float = 30.0, call_timeout: float = 5.0) -> TurnRunner:
    return TurnRunner(workers=workers, queue=queue,
                      limits=lambda: TurnLimits(deadline_seconds=deadline, call_timeout_seconds=call_timeout))


async def _wait_until_idle(runner: TurnRunner, seconds: float = 5.0) -> None:
    end = time.monotonic() + seconds
    while runner.in_flight() and time.monotonic() < end:
        await asyncio.sleep(0.02)


async def test_leaving_the_stream_early_sets_cancel_and_the_worker_stops_and_frees_its_slot():
    runner = _runner()
    cancel = threading.Event()
    produced: list[int] = []

    def produce():
        for i in range(1000):
            if cancel.is_set():
                return
            produced.append(i)
            yield ChatEvent("token", {"text": str(i)})
            cancel.wait(0.01)

    stream = runner.stream(runner.reserve(), produce, cancel)
    async for _event in stream:
        break
    await stream.aclose()
    assert cancel.is_set()
    await _wait_until_idle(runner)
    assert runner.in_flight() == 0
    assert len(produced) < 1000


async def test_a_crashing_worker_becomes_an_internal_error_event():
    runner = _runner()

    def produce():
        yield ChatEvent("understanding", {})
        raise RuntimeError("boom")

    got = [e async for e in runner.stream(runner.reserve(), produce, threading.Event())]
    assert [e.type for e in got] == ["understanding", "error"] and got[-1].data["code"] == "internal"


def test_past_workers_and_queue_a_turn_is_refused_busy_and_a_released_slot_makes_room():
    runner = _runner(workers=1, queue=1)
    first, _second = runner.reserve(), runner.reserve()
    with pytest.raises(ServerBusy):
        runner.reserve()
    first.release()
    assert runner.in_flight() == 1
    runner.reserve()


def test_one_user_past_their_share_is_refused_while_others_still_get_slots():
    runner = TurnRunner(workers=2, queue=4, per_owner=2)
    mine = [runner.reserve(owner=1), runner.reserve(owner=1)]
    with pytest.raises(TooManyTurns):
        runner.reserve(owner=1)
    runner.reserve(owner=2)  # everyone else is still served
    mine[0].release()
    runner.reserve(owner=1)  # a finished turn gives the share back


def test_by_default_a_user_holds_four_turns_and_never_more_than_half_a_small_pool():
    assert TurnRunner(workers=16, queue=64).per_owner == 4
    small = TurnRunner(workers=2, queue=4)
    assert small.per_owner == 3
    for _ in range(3):
        small.reserve(owner=1)
    with pytest.raises(TooManyTurns):
        small.reserve(owner=1)
    for _ in range(3):
        small.reserve(owner=2)


def test_a_slot_reserved_before_the_user_was_known_counts_once_claimed():
    runner = TurnRunner(workers=2, queue=2, per_owner=1)
    slot = runner.reserve()
    slot.claim_for(7)
    with pytest.raises(TooManyTurns):
        runner.reserve(owner=7)
    slot.release()
    runner.reserve(owner=7)
    assert runner.in_flight() == 1


async def test_a_queued_turn_waits_for_the_worker_then_runs():
    runner = _runner(workers=1, queue=1)
    gate = threading.Event()
    running: list[str] = []

    def produce(name: str):
        def gen():
            running.append(name)
            if name == "first":
                gate.wait(5)
            yield ChatEvent("done", {"who": name})
        return gen

    first = runner.stream(runner.reserve(), produce("first"), threading.Event())
    second = runner.stream(runner.reserve(), produce("second"), threading.Event())
    first_task = asyncio.ensure_future(first.__anext__())
    second_task = asyncio.ensure_future(second.__anext__())
    deadline = time.monotonic() + 10
    while not running and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert running == ["first"]  # one worker: the second turn waits in the queue
    assert runner.in_flight() == 2
    gate.set()
    assert (await first_task).data == {"who": "first"}
    assert (await second_task).data == {"who": "second"}
    await first.aclose()
    await second.aclose()


async def test_a_silent_turn_gets_heartbeats():
    runner = _runner()
    cancel = threading.Event()

    def produce():
        cancel.wait(0.5)
        yield ChatEvent("done", {})

    got = [item async for item in runner.stream(runner.reserve(), produce, cancel, heartbeat=0.1)]
    assert got.count(HEARTBEAT) >= 2
    assert got[-1] == ChatEvent("done", {})


async def test_a_turn_past_its_deadline_ends_with_llm_timeout_and_is_cancelled(monkeypatch):
    monkeypatch.setattr("chat.runner.DEADLINE_GRACE_SECONDS", 0.2)
    runner = _runner(deadline=0.3)
    cancel = threading.Event()

    def produce():
        cancel.wait(60)  # a step that ignores every deadline
        yield ChatEvent("done", {})

    started = time.monotonic()
    got = [item async for item in runner.stream(runner.reserve(), produce, cancel)]
    assert time.monotonic() - started < 30  # half of what the step would hold it for: load cannot reach it
    assert got[-1].type == "error" and got[-1].data["code"] == "llm_timeout"
    assert cancel.is_set()
    await _wait_until_idle(runner)
    assert runner.in_flight() == 0


async def test_the_turn_runs_inside_a_call_budget_with_its_limits_and_cancel_flag():
    runner = _runner(deadline=20.0, call_timeout=4.0)
    cancel = threading.Event()
    seen = {}

    def produce():
        budget = current_budget()
        seen.update(remaining=budget.remaining(), call_timeout=budget.call_timeout, retries=budget.max_retries,
                    cancel=budget.cancel)
        yield ChatEvent("done", {})

    [_ async for _ in runner.stream(runner.reserve(), produce, cancel)]
    assert 15 < seen["remaining"] <= 20 and seen["call_timeout"] == 4.0 and seen["retries"] == 1
    assert seen["cancel"] is cancel
    assert current_budget() is None  # only inside the turn's thread


def test_it_rejects_a_pool_without_workers():
    with pytest.raises(ValueError):
        TurnRunner(workers=0, queue=1)


async def test_an_overrun_turn_names_its_trace_in_the_error(monkeypatch):
    from docmind.telemetry import report_trace_id

    monkeypatch.setattr("chat.runner.DEADLINE_GRACE_SECONDS", 0.2)
    runner = _runner(deadline=0.3)
    cancel = threading.Event()

    def produce():
        report_trace_id("4bf92f3577b34da6a3ce929d0e0e4736")  # what the turn's root span does when tracing is on
        cancel.wait(10)
        yield ChatEvent("done", {})

    got = [item async for item in runner.stream(runner.reserve(), produce, cancel)]
    assert got[-1].type == "error" and got[-1].data["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    await _wait_until_idle(runner)


@pytest.mark.django_db
def test_a_turn_reports_its_trace_id_to_whoever_runs_it(member, spans):
    from chat.pipeline import ChatPipeline
    from docmind.telemetry import TraceIdSink, reporting_trace_id

    with reporting_trace_id(TraceIdSink()) as sink:
        events = list(ChatPipeline().run(user=member, message="你好", cancel=threading.Event()))
    root = next(s for s in spans.get_finished_spans() if s.name == "chat.turn")
    assert sink.value == format(root.context.trace_id, "032x") == events[-1].data["trace_id"]
