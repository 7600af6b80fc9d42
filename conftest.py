"""Test-wide set-up: a throw-away data dir (SQLite, Milvus Lite file, uploads) per test run."""
import os
import tempfile

# Must happen before Django reads settings: tests never touch the developer's ./data.
os.environ.setdefault("DOCMIND_DATA_DIR", tempfile.mkdtemp(prefix="docmind-test-"))
os.environ.setdefault("DOCMIND_INGEST_WORKER", "false")
# Tests run offline unless a test starts its own scripted OpenAI-compatible server.
os.environ.pop("OPENAI_API_KEY", None)

pytest_plugins = ["tests.fakes.plugin"]
