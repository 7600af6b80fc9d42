"""Processes started while the Milvus client is busy in other threads start: gRPC's fork handlers are off."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import ctypes, os, subprocess, sys, tempfile, threading
    import docmind  # noqa: F401  (what every DocMind process imports first)
    from pymilvus import MilvusClient

    client = MilvusClient(os.path.join(tempfile.mkdtemp(), "fork.db"))
    client.create_collection("t", dimension=4)
    client.insert("t", [{"id": i, "vector": [0.1, 0.2, 0.3, float(i)]} for i in range(10)])
    busy = threading.Event()

    def search():
        while True:
            client.search("t", data=[[0.1, 0.2, 0.3, 0.4]], limit=2)
            busy.set()

    threading.Thread(target=search, daemon=True).start()
    busy.wait(60)
    libc = ctypes.CDLL("libc.so.6")
    failed = sum(subprocess.run(["/bin/true"], preexec_fn=lambda: libc.prctl(1, 9)).returncode != 0
                 for _ in range(150))
    print(failed)
    sys.stdout.flush()
    os._exit(0)
""")


def test_children_forked_while_the_milvus_client_searches_all_start():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=240,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.stdout.strip().splitlines()[-1] == "0", done.stderr[-2000:]
