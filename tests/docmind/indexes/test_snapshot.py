"""IndexSnapshot's scheduling: a save waits for writes to settle, and a command's `settle` saves what is pending."""
import threading

from docmind.indexes.snapshot import IndexSnapshot, settle


def _snapshot(tmp_path) -> IndexSnapshot:
    tokens = {}
    return IndexSnapshot(path=tmp_path / "index.npz", get_token=lambda: tokens.get("t"),
                         set_token=lambda token: tokens.__setitem__("t", token), settle_seconds=600)


def test_settle_runs_a_save_still_waiting_for_writes_to_settle_and_waits_for_it(tmp_path):
    snapshot = _snapshot(tmp_path)
    saved = threading.Event()
    snapshot.schedule(lambda: saved.set() or True)
    assert not saved.wait(0.2)  # it waits the settle time
    settle(timeout=10)
    assert saved.is_set()
    assert snapshot.wait(0)


def test_settle_leaves_a_cancelled_save_cancelled(tmp_path):
    snapshot = _snapshot(tmp_path)
    saved = threading.Event()
    snapshot.schedule(lambda: saved.set() or True)
    snapshot.cancel()
    settle(timeout=10)
    assert not saved.is_set()


def test_a_save_that_already_ran_is_not_run_again_by_settle(tmp_path):
    snapshot = _snapshot(tmp_path)
    runs = []
    snapshot.schedule(lambda: runs.append(1) or True, delay=0.0)
    assert snapshot.wait(10)
    settle(timeout=10)
    assert runs == [1]
