"""The turn record's stage timings."""
from __future__ import annotations

import pytest

from chat.pipeline.record import TurnRecord


def test_a_timed_stage_is_logged_under_its_name():
    record = TurnRecord()
    with record.timed("retrieval"):
        pass
    assert set(record.as_log()["timings_ms"]) == {"retrieval"}
    assert record.timings_ms["retrieval"] >= 0


def test_a_stage_that_fails_still_logs_its_time():
    record = TurnRecord()
    with pytest.raises(TimeoutError), record.timed("generation"):
        raise TimeoutError("the model went silent")
    assert "generation" in record.timings_ms
