"""PythonSandbox: ordinary computations work; limits, timeouts and a missing runner are reported."""
from __future__ import annotations

import pytest

from docmind.sandbox import PythonSandbox, RunnerConfig, SandboxUnavailable, runner_status
from tests.conftest import skip_unless_required


@pytest.fixture(scope="module")
def sandbox() -> PythonSandbox:
    # A wall time no busy machine reaches for these snippets; the test of the wall time has its own sandbox.
    return PythonSandbox(timeout_seconds=30, memory_mb=256, output_limit=1024)


def test_the_runner_is_available_on_this_machine():
    # CI installs bubblewrap: an unavailable runner must fail here, not skip the escape tests.
    status = runner_status()
    assert status.available, status.reason
    assert status.describe()["seccomp"] is True


def test_it_runs_a_computation(sandbox):
    result = sandbox.run(code="import statistics\nprint(statistics.mean([1, 2, 3, 4]))")
    assert result.ok and result.stdout.strip() == "2.5"


def test_it_keeps_files_inside_its_own_directory(sandbox):
    result = sandbox.run(code="open('a.txt','w').write('hi')\nprint(open('a.txt').read())")
    assert result.stdout.strip() == "hi"


def test_it_runs_with_an_empty_environment_as_nobody(sandbox):
    result = sandbox.run(code="import os\nprint(os.getuid(), sorted(os.environ))")
    uid, names = result.stdout.split(" ", 1)
    assert uid == "65534"
    # Only what bwrap and the interpreter set themselves: the working dir and UTF-8 locale coercion.
    assert set(eval(names)) <= {"PWD", "LC_CTYPE"}


def test_a_fork_bomb_is_contained(sandbox):
    result = sandbox.run(code="import os\nwhile True:\n    os.fork()")
    assert result.exit_code != 0 and not result.timed_out


def test_an_infinite_loop_is_killed_at_the_wall_time():
    result = PythonSandbox(timeout_seconds=2, memory_mb=256).run(code="while True:\n    pass")
    assert result.timed_out and not result.ok and "killed" in result.stderr
    assert result.duration_ms < 15_000  # killed, not left to run: the wall time bounds it whatever the load


def test_huge_output_is_capped_and_marked(sandbox):
    result = sandbox.run(code="while True:\n    print('A' * 1000)")
    assert result.truncated and len(result.stdout) < 1200


def test_a_memory_bomb_fails_inside_the_sandbox(sandbox):
    result = sandbox.run(code="x = bytearray(2 * 1024 ** 3)\nprint('allocated')")
    assert result.exit_code != 0 and "allocated" not in result.stdout


def test_memory_spread_over_processes_is_capped_as_a_whole():
    # Each child stays under the per-process limit; together they exceed the run's total.
    sandbox = PythonSandbox(timeout_seconds=5, memory_mb=64)
    if runner_status().cgroups is None:
        skip_unless_required("no writable cgroup here: only per-process limits apply",
                             variable="DOCMIND_REQUIRE_CGROUPS")
    code = ("import os, time\npids = []\nfor _ in range(6):\n    pid = os.fork()\n    if pid == 0:\n"
            "        x = bytearray(40 * 1024 * 1024)\n        time.sleep(2)\n        os._exit(0)\n"
            "    pids.append(pid)\n"
            "codes = [os.waitpid(p, 0)[1] for p in pids]\nprint('all survived' if not any(codes) else 'some killed')")
    result = sandbox.run(code=code)
    assert "some killed" in result.stdout, result


@pytest.mark.parametrize("kwargs", [{"timeout_seconds": 0, "memory_mb": 256}, {"timeout_seconds": 1, "memory_mb": 8}])
def test_it_rejects_bad_limits(kwargs):
    with pytest.raises(ValueError):
        PythonSandbox(**kwargs)


def test_without_bubblewrap_it_refuses_to_run_and_says_why():
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        PythonSandbox(timeout_seconds=1, memory_mb=64, runner=RunnerConfig(bwrap="/nonexistent/bwrap"))


def test_without_its_interpreter_it_refuses_to_run_and_says_why():
    with pytest.raises(SandboxUnavailable, match="interpreter"):
        PythonSandbox(timeout_seconds=1, memory_mb=64, runner=RunnerConfig(python="/nonexistent/python3"))


def test_a_run_whose_cgroup_cannot_be_made_is_refused_not_run_unconfined(tmp_path):
    import dataclasses
    from pathlib import Path

    from docmind.sandbox.cgroup import CgroupLayout

    missing = CgroupLayout(version=1, parents={"memory": Path("/nonexistent/memory"), "pids": Path("/nonexistent")})
    status = dataclasses.replace(runner_status(), cgroups=missing)
    marker = tmp_path / "ran"
    sandbox = PythonSandbox(timeout_seconds=2, memory_mb=64, _status=status)
    result = sandbox.run(code=f"print('ran')\nopen({str(marker)!r}, 'w')")
    assert not result.ok and "ran" not in result.stdout and "could not be set up" in result.stderr


def _trial_with_failures(monkeypatch, failures: int):
    from docmind.sandbox import python as sandbox_module
    from docmind.sandbox.result import SandboxResult

    # The process-wide verdict is taken before the runner is replaced, so that only the trial below is counted.
    config = RunnerConfig.from_environment()
    status = runner_status(config)
    real_run, calls, slept = sandbox_module.PythonSandbox.run, [], []

    def run(self, *, code):
        calls.append(code)
        if len(calls) <= failures:  # a start that fails, as bwrap does when it exits before reporting
            return SandboxResult(stdout="", stderr="[sandbox] the sandbox could not start", exit_code=1,
                                 duration_ms=1.0)
        return real_run(self, code=code)

    monkeypatch.setattr(sandbox_module.PythonSandbox, "run", run)
    monkeypatch.setattr(sandbox_module, "_trial_pause", slept.append)
    return sandbox_module._trial(config, status), calls, slept


def test_one_failed_start_does_not_switch_the_sandbox_off_for_the_process(monkeypatch):
    status, calls, slept = _trial_with_failures(monkeypatch, failures=1)
    assert status.available and len(calls) == 2 and len(slept) == 1


def test_a_runner_that_never_starts_is_reported_unavailable_with_the_reason(monkeypatch):
    from docmind.sandbox.python import TRIAL_ATTEMPTS

    status, calls, slept = _trial_with_failures(monkeypatch, failures=TRIAL_ATTEMPTS)
    # It waits between attempts, not after the last one.
    assert not status.available and len(calls) == TRIAL_ATTEMPTS and len(slept) == TRIAL_ATTEMPTS - 1
    assert "could not start" in status.reason
