"""PythonSandbox: escapes are contained and reported, ordinary computations work."""
from __future__ import annotations

import os

import pytest

from docmind.sandbox import PythonSandbox


@pytest.fixture(scope="module")
def sandbox() -> PythonSandbox:
    return PythonSandbox(timeout_seconds=2, memory_mb=256, output_limit=1024)


def test_it_runs_a_computation(sandbox):
    result = sandbox.run(code="import statistics\nprint(statistics.mean([1, 2, 3, 4]))")
    assert result.ok and result.stdout.strip() == "2.5"


def test_it_keeps_files_inside_its_own_directory(sandbox):
    result = sandbox.run(code="open('a.txt','w').write('hi')\nprint(open('a.txt').read())")
    assert result.stdout.strip() == "hi"


def test_network_is_unreachable(sandbox):
    code = ("import socket\ns = socket.create_connection(('127.0.0.1', 80), timeout=1)\nprint('connected')")
    result = sandbox.run(code=code)
    assert result.exit_code != 0 and "connected" not in result.stdout


def test_it_cannot_read_files_outside(sandbox):
    result = sandbox.run(code="print(open('/etc/passwd').read())")
    assert result.exit_code != 0 and "root:" not in result.stdout
    assert "not allowed" in result.stderr


def test_it_cannot_write_outside(sandbox, tmp_path):
    target = tmp_path / "pwned"
    result = sandbox.run(code=f"open({str(target)!r}, 'w').write('x')")
    assert result.exit_code != 0 and not target.exists()


def test_a_fork_bomb_is_contained(sandbox):
    result = sandbox.run(code="import os\nwhile True:\n    os.fork()")
    assert result.exit_code != 0 and not result.timed_out


def test_an_infinite_loop_is_killed_at_the_wall_time(sandbox):
    result = sandbox.run(code="while True:\n    pass")
    assert result.timed_out and not result.ok and "killed" in result.stderr
    assert result.duration_ms < 5000


def test_huge_output_is_capped_and_marked(sandbox):
    result = sandbox.run(code="while True:\n    print('A' * 1000)")
    assert result.truncated and len(result.stdout) < 1200


def test_a_memory_bomb_fails_inside_the_sandbox(sandbox):
    result = sandbox.run(code="x = bytearray(2 * 1024 ** 3)\nprint('allocated')")
    assert result.exit_code != 0 and "allocated" not in result.stdout


@pytest.mark.skipif(os.getuid() != 0, reason="the uid drop needs root")
def test_it_runs_as_nobody_when_started_as_root(sandbox):
    result = sandbox.run(code="import os\nprint(os.getuid())")
    assert result.stdout.strip() == "65534"


@pytest.mark.parametrize("kwargs", [{"timeout_seconds": 0, "memory_mb": 256}, {"timeout_seconds": 1, "memory_mb": 8}])
def test_it_rejects_bad_limits(kwargs):
    with pytest.raises(ValueError):
        PythonSandbox(**kwargs)


@pytest.mark.parametrize("module", ["_posixsubprocess", "subprocess", "socket", "ctypes"])
def test_process_and_network_modules_cannot_be_imported(sandbox, module):
    result = sandbox.run(code=f"import {module}\nprint('imported')")
    assert result.exit_code != 0 and "imported" not in result.stdout
