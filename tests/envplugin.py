"""Loaded with -p before pytest-django reads settings: a throw-away data dir and offline mode for tests."""
import os
import tempfile

# Tests never touch the developer's ./data (SQLite file, Milvus Lite file, uploads).
os.environ.setdefault("DOCMIND_DATA_DIR", tempfile.mkdtemp(prefix="docmind-test-"))
os.environ.setdefault("DOCMIND_INGEST_WORKER", "false")
# Offline unless a test starts its own scripted OpenAI-compatible server.
os.environ.pop("OPENAI_API_KEY", None)
# Many tests fetch tokens from 127.0.0.1 within a minute (and the Redis-backed throttle outlives
# a test): the throttle tests set their own low rate from a client address of their own.
os.environ.setdefault("DOCMIND_TOKEN_RATE", "100000/minute")
