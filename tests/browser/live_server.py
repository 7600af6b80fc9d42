"""A real DocMind server (daphne) on loopback in a subprocess, with its own throw-away data dir.

Used by the browser test and by bench/chat_bench.py. The server gets a fresh SQLite database
(migrated, one user, optional ingested texts) so that it never shares state with the test
process; DATABASE_URL / REDIS_URL are dropped for the same reason.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable

# The set-up, run by the server process itself before it serves (SERVE) or by a `manage.py shell` (`apply`).
SETUP = """
import json
from docmind.roles import MEMBER, user_set_role
from django.contrib.auth import get_user_model
def setup(spec):
    User = get_user_model()
    user, created = User.objects.get_or_create(username=spec["username"])
    user.set_password(spec["password"]); user.save()
    user_set_role(user=user, role=MEMBER)
    if spec.get("staff"):
        from docmind.roles import ADMIN
        boss, _ = User.objects.get_or_create(username=spec["staff"]["username"])
        boss.set_password(spec["staff"]["password"]); boss.is_superuser = True; boss.save()
        user_set_role(user=boss, role=ADMIN)
    from kb.models import KnowledgeBase
    from kb.services import kb_create, kb_grant
    for base in spec.get("kbs") or []:
        kb = KnowledgeBase.objects.filter(name=base["name"]).first() or kb_create(name=base["name"])
        if base.get("reader"):
            kb_grant(kb=kb, access=base["reader"], user=user)
    if spec["texts"]:
        from kb.ingestion.worker import process_pending_documents
        from kb.models import Document
        from kb.services import document_ingest_text
        for t in spec["texts"]:
            if not Document.objects.filter(title=t["title"]).exists():
                kb = KnowledgeBase.objects.get(name=t["kb"]) if t.get("kb") else None
                document_ingest_text(title=t["title"], text=t["text"], domain=t.get("domain") or "general", kb=kb)
        process_pending_documents()
"""
# A server process that first applies a pending set-up (one line of JSON on stdin, or an empty line), then serves:
# one interpreter, one Django start and one embedder load instead of a set-up process and a server process each.
SERVE = """
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
import django
django.setup()
""" + SETUP + """
import sys
line = sys.stdin.readline()
if line.strip():
    setup(json.loads(line))
    from django.db import connections
    connections.close_all()
sys.stdin.close()
from docmind.serve import main
main(sys.argv[1:])
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    data_dir: Path
    username: str = "reader"
    password: str = "reader-pass-123"
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    # The checkout to serve (a benchmark may compare another commit) and variables to add, e.g. a
    # DATABASE_URL naming a throw-away database.
    root: Path = ROOT
    extra_env: dict[str, str] = field(default_factory=dict)
    # Off by default so that a test decides when documents are ingested (setup drains the queue itself).
    ingest_worker: bool = False
    # What `prepare` asked for and the next `start` makes before serving (None: nothing).
    _pending: dict | None = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY", "DJANGO_SETTINGS_MODULE")}
        env.update(DOCMIND_DATA_DIR=str(self.data_dir), DOCMIND_INGEST_WORKER=str(self.ingest_worker).lower(),
                   PYTHONUNBUFFERED="1")
        env.update(self.extra_env)
        return env

    def migrate(self, timeout: float = 900) -> None:
        """Create and migrate the server's database in its data dir."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([PYTHON, "manage.py", "migrate", "--noinput"], cwd=self.root, env=self.env(),
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"migrate failed:\n{done.stdout}\n{done.stderr}")

    def prepare(self, texts: list[dict] | None = None, timeout: float = 900, staff: dict | None = None,
                kbs: list[dict] | None = None, template: Path | None = None) -> None:
        """Migrate now; the user (and `staff`), the knowledge bases `kbs` ({"name", "reader": "read" to grant the
        user, or None}) and the ingestion of `texts` ({"title", "text", "domain", "kb": a name or None for the
        default base}) are made by the server process when `start` starts it, before it serves (`apply` makes
        them now, for a caller that needs them before the server runs).

        `template`: a data dir that another LiveServer of the same checkout has migrated and nothing else (see
        `migrated_template`); copying it replaces the migration, which costs a process start and seconds of
        CPU each time. Only for the default SQLite database: a DATABASE_URL in `extra_env` is migrated."""
        if template is not None and "DATABASE_URL" not in self.extra_env:
            shutil.copytree(template, self.data_dir, dirs_exist_ok=True)
        else:
            self.migrate(timeout=timeout)
        self._pending = {"username": self.username, "password": self.password, "texts": texts or [],
                         "staff": staff, "kbs": kbs or []}

    def apply(self, timeout: float = 900, then: str = "", env: dict[str, str] | None = None) -> str:
        """Make what `prepare` asked for now, in a `manage.py shell` of its own, then run the code `then` in it
        (with `env` added to the server's environment); the shell's output."""
        code = SETUP + "\nimport sys\nspec = sys.stdin.read()\nif spec:\n    setup(json.loads(spec))\n" \
            + then + "\nprint('setup ok')\n"
        done = subprocess.run([PYTHON, "manage.py", "shell", "-c", code],
                              input=json.dumps(self._pending) if self._pending is not None else "",
                              cwd=self.root, env={**self.env(), **(env or {})}, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode or "setup ok" not in done.stdout:
            raise RuntimeError(f"setup failed:\n{done.stdout}\n{done.stderr}")
        self._pending = None
        return done.stdout

    def start(self, timeout: float = 240) -> None:
        # Generous: on a loaded machine (CI's two suites, a busy shared one) importing the app and opening its
        # indexes has taken over a minute; the loop returns as soon as /healthz answers.
        self.log_path = self.data_dir / "daphne.log"
        log = open(self.log_path, "w")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            [PYTHON, "-c", SERVE, "-b", "127.0.0.1", "-p", str(self.port), "project.asgi:application"],
            cwd=self.root, env=self.env(), stdin=subprocess.PIPE,
            stdout=log, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(self._pending) if self._pending is not None else "") + "\n")
        self.process.stdin.close()
        self._pending = None  # made once: a restarted server serves what the first start made
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited:\n{self.log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2):
                    return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("daphne did not come up in time")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None


def migrated_template(data_dir: Path, root: Path = ROOT) -> Path:
    """A freshly migrated data dir (SQLite database, secret key) for `LiveServer.prepare(template=…)`."""
    LiveServer(data_dir=data_dir, root=root).migrate()
    return data_dir
