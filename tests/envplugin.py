"""Loaded with -p before pytest-django reads settings: a throw-away data dir and offline mode for tests."""
import os
import tempfile

# Tests never touch the developer's ./data (SQLite file, Milvus Lite file, uploads).
os.environ.setdefault("DOCMIND_DATA_DIR", tempfile.mkdtemp(prefix="docmind-test-"))
os.environ.setdefault("DOCMIND_INGEST_WORKER", "false")
# Offline unless a test starts its own scripted OpenAI-compatible server.
os.environ.pop("OPENAI_API_KEY", None)
