"""End to end: a planner that asks executeCode to hunt for API tokens gets none back."""
from __future__ import annotations

import json

import pytest
from django.conf import settings
from rest_framework.authtoken.models import Token

from docmind.sandbox import PythonSandbox
from tests.fakes.openai_server import tool_calls

# Committed, so the token is really in the SQLite file (or behind the MariaDB socket) to be hunted.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# Everything that worked against the old sandbox, in one script: the database file and the data
# dir by path, the parent's environment and command line through /proc, the MariaDB socket, and
# a walk of every directory the code can see.
HUNT = r"""
import os, re, socket
paths = {paths!r}
found = []
def scan(text):
    found.extend(re.findall(r"[0-9a-f]{{40}}", text))
for p in paths:
    try:
        scan(open(p, errors="replace").read())
    except Exception as exc:
        print("refused", p, type(exc).__name__)
for pid in [d for d in os.listdir("/proc") if d.isdigit()]:
    for f in ("environ", "cmdline"):
        try:
            scan(open(f"/proc/{{pid}}/{{f}}", "rb").read().decode("latin-1"))
        except Exception:
            pass
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/mysqld/mysqld.sock")
    s.sendall(b"x")
    scan(s.recv(4096).decode("latin-1"))
except Exception as exc:
    print("mysql refused", type(exc).__name__)
for top in ("/work", "/tmp", "/dev/shm"):
    for root, dirs, files in os.walk(top):
        for name in files:
            try:
                scan(open(os.path.join(root, name), errors="replace").read())
            except Exception:
                pass
print("FOUND", found)
"""


def test_a_planner_cannot_read_api_tokens_through_execute_code(scripted_openai, model, make_loop, django_user_model):
    user = django_user_model.objects.create_user(username="victim", password="pw-victim")
    token = Token.objects.create(user=user)
    db_name = str(settings.DATABASES["default"]["NAME"])
    code = HUNT.format(paths=[db_name, db_name + "-wal", str(settings.DATA_DIR / "secret_key"), "/proc/1/environ"])
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京 人口"}), ("executeCode", {"code": code})),
                            "检索完成"])
    events = []
    result = make_loop(model, sandbox=PythonSandbox(timeout_seconds=5, memory_mb=256)).run(
        question="北京有多少人口？", emit=events.append)
    code_exec = [e for e in events if e.type == "code_exec"]
    assert code_exec and "FOUND []" in code_exec[0].data["stdout"]
    returned = json.dumps([r["messages"] for r in scripted_openai.requests], ensure_ascii=False)
    assert "FOUND []" in returned  # the tool's output did reach the model ...
    assert token.key not in returned  # ... without any token in it
    assert token.key not in json.dumps(result.computations, ensure_ascii=False)
