"""Escapes that defeated the Python-level sandbox: each must fail against the OS-level one."""
from __future__ import annotations

import os
import socket
import uuid

import psutil
import pytest
from django.conf import settings

from docmind.sandbox import PythonSandbox
from tests.conftest import skip_unless_required


@pytest.fixture(scope="module")
def sandbox() -> PythonSandbox:
    # A wall time no busy machine reaches for these probes; the run into a timeout below has its own sandbox.
    return PythonSandbox(timeout_seconds=30, memory_mb=256, output_limit=4096)


@pytest.fixture
def secret_in_data_dir():
    marker = f"secret-{uuid.uuid4().hex}"
    path = settings.DATA_DIR / f"escape-probe-{uuid.uuid4().hex[:8]}"
    path.write_text(marker)
    yield path, marker
    path.unlink()


def _try_read(paths: list[str]) -> str:
    return ("import os\nfor p in " + repr(paths) + ":\n    try:\n        print(open(p, errors='replace').read())\n"
            "    except Exception as exc:\n        print('refused', p, type(exc).__name__)\n")


def test_tampering_with_python_level_guards_gains_nothing(sandbox, secret_in_data_dir):
    path, marker = secret_in_data_dir
    # What beat the audit hook: rewrite the globals it reads (they lived in __main__), then read
    # outside the work dir.
    code = ("import os, sys\nm = sys.modules['__main__']\nm.real_work = '/'\nm.readable = ('/',)\n"
            "os.path.realpath = lambda p: '/work/x'\n"
            + _try_read([str(path), str(settings.DATA_DIR / "secret_key")]))
    result = sandbox.run(code=code)
    assert marker not in result.stdout and result.stdout.count("refused") == 2


def test_the_data_dir_and_the_database_file_are_not_visible(sandbox, secret_in_data_dir):
    path, marker = secret_in_data_dir
    db_name = str(settings.DATABASES["default"]["NAME"])
    code = ("import os\nprint(sorted(os.listdir('/')))\n"
            + f"print([os.path.exists(p) for p in {[str(settings.DATA_DIR), db_name, str(settings.BASE_DIR)]!r}])\n"
            + _try_read([str(path), db_name, "/proc/1/root" + str(path), "/etc/passwd"]))
    result = sandbox.run(code=code)
    lines = result.stdout.splitlines()
    assert set(eval(lines[0])) <= {"dev", "lib", "lib32", "lib64", "proc", "tmp", "usr", "work"}
    assert lines[1] == "[False, False, False]"
    assert marker not in result.stdout and "root:" not in result.stdout


def test_the_mariadb_and_other_unix_sockets_are_unreachable(sandbox, tmp_path):
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "app.sock"))
    abstract = socket.socket(socket.AF_UNIX)
    abstract_name = f"\0docmind-test-{uuid.uuid4().hex}"
    abstract.bind(abstract_name)
    for sock in (listener, abstract):
        sock.listen(1)
        sock.setblocking(False)
    try:
        targets = ["/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", str(tmp_path / "app.sock"), abstract_name]
        code = ("import socket\nfor t in " + repr(targets) + ":\n    try:\n        s = socket.socket(socket.AF_UNIX)\n"
                "        s.connect(t)\n        print('connected', repr(t))\n    except OSError as exc:\n"
                "        print('refused', type(exc).__name__)\n")
        result = sandbox.run(code=code)
        assert "connected" not in result.stdout and result.stdout.count("refused") == 4
        for sock in (listener, abstract):
            with pytest.raises(BlockingIOError):
                sock.accept()
    finally:
        listener.close()
        abstract.close()


def test_tcp_to_the_app_is_unreachable(sandbox):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    port = server.getsockname()[1]
    try:
        code = ("import socket\ntry:\n    socket.create_connection(('127.0.0.1', " + str(port) + "), timeout=1)\n"
                "    print('connected')\nexcept OSError as exc:\n    print('refused', type(exc).__name__)\n")
        result = sandbox.run(code=code)
        assert "connected" not in result.stdout and "refused" in result.stdout
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()


def test_the_parents_environment_is_not_readable(sandbox, monkeypatch):
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    code = ("import os\nprint(os.environ)\nprint(os.getppid())\nfor pid in os.listdir('/proc'):\n"
            "    if pid.isdigit():\n        for f in ('environ', 'cmdline'):\n            try:\n"
            "                print(pid, f, open(f'/proc/{pid}/{f}', 'rb').read())\n"
            "            except OSError as exc:\n                print(pid, f, type(exc).__name__)\n"
            "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n")
    result = sandbox.run(code=code)
    assert result.ok, result.stderr
    assert key not in result.stdout
    # Its own PID namespace: only the sandbox's init and the code itself exist.
    assert len(eval(result.stdout.strip().splitlines()[-1])) <= 3


def _survivors(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


@pytest.mark.parametrize("parent", ["exits at once", "runs into the timeout"])
def test_a_setsid_child_does_not_outlive_the_run(sandbox, parent):
    marker = f"docmind-escape-{uuid.uuid4().hex}"
    wait = "import time\ntime.sleep(60)\n" if parent == "runs into the timeout" else ""
    code = ("import os, sys\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
            "    os._exit(0)\nimport time\ntime.sleep(0.3)\nprint('started', flush=True)\n" + wait)
    if parent == "runs into the timeout":
        sandbox = PythonSandbox(timeout_seconds=5, memory_mb=256, output_limit=4096)
    result = sandbox.run(code=code)
    assert "started" in result.stdout
    survivors = _survivors(marker)
    for proc in survivors:  # never leave one behind, even when the test fails
        proc.kill()
    assert survivors == []


def test_no_control_group_is_left_behind(sandbox):
    from docmind.sandbox.cgroup import detect_layout

    layout = detect_layout()
    if layout is None:
        skip_unless_required("no writable cgroup here", variable="DOCMIND_REQUIRE_CGROUPS")
    sandbox.run(code="print(1)")
    leftovers = [c.name for parent in layout.parents.values() for c in parent.iterdir()
                 if c.name.startswith(f"docmind-sbx-{os.getpid()}-")]
    assert leftovers == []


def test_kernel_interfaces_for_escaping_are_refused_by_seccomp(sandbox):
    # ctypes reaches the system calls directly, past anything Python could guard. personality()
    # and an AF_INET socket() succeed for any unprivileged process: only the filter refuses them.
    calls = [("personality", (0xFFFFFFFF,)), ("socket", (2, 1, 0)), ("unshare", (0x10000000,)),
             ("mount", (b"x", b"/tmp", b"tmpfs", 0, 0))]
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"for name, args in {calls!r}:\n"
            "    rc = getattr(libc, name)(*args)\n    print(name, rc, os.strerror(ctypes.get_errno()))\n")
    result = sandbox.run(code=code)
    assert result.ok, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 4 and all(" -1 " in line for line in lines), lines
    assert all("Operation not permitted" in line for line in lines)


def test_host_programs_are_not_in_the_sandbox(sandbox):
    code = ("import subprocess\nfor cmd in (['/bin/sh', '-c', 'id'], ['/usr/bin/env'], ['mariadb']):\n    try:\n"
            "        subprocess.run(cmd)\n        print('ran', cmd)\n    except OSError as exc:\n"
            "        print('refused', type(exc).__name__)\n")
    result = sandbox.run(code=code)
    assert "ran" not in result.stdout and result.stdout.count("refused") == 3


def test_dev_is_read_only_and_dev_shm_is_small_while_dev_null_still_works(sandbox):
    code = ("import errno\n"
            "def fill(d):\n"
            "    n = 0\n"
            "    try:\n"
            "        for i in range(64):\n"
            "            with open(f'{d}/f{i}', 'wb') as f:\n"
            "                f.write(b'x' * ((1 << 20) - 4096))\n"
            "            n += 1\n"
            "    except OSError as exc:\n"
            "        return n, errno.errorcode[exc.errno]\n"
            "    return n, None\n"
            "print(fill('/dev'), fill('/dev/shm'))\n"
            "open('/dev/null', 'wb').write(b'x'); print('null ok')\n")
    result = sandbox.run(code=code)
    assert result.stdout.splitlines() == ["(0, 'EROFS') (1, 'ENOSPC')", "null ok"], result


def test_a_run_killed_by_the_memory_limit_says_so():
    from docmind.sandbox import runner_status

    if runner_status().cgroups is None:
        skip_unless_required("no writable cgroup here: only per-process limits apply",
                             variable="DOCMIND_REQUIRE_CGROUPS")
    # The main process holds the most, so the cgroup's OOM killer picks it once the children push the total over.
    code = ("import os, time\nmine = bytearray(48 << 20)\nfor _ in range(4):\n    if os.fork() == 0:\n"
            "        del mine\n        x = bytearray(36 << 20)\n        time.sleep(5)\n        os._exit(0)\n"
            "time.sleep(5)\nprint('survived')")
    result = PythonSandbox(timeout_seconds=10, memory_mb=64).run(code=code)
    assert "survived" not in result.stdout
    assert "[sandbox] killed (memory limit)" in result.stderr, result
