"""Environment parsing: unset means the embedded default, a malformed value names its variable."""
import sys
import types
from pathlib import Path

import pytest

from docmind import env


def test_unset_database_url_means_sqlite_in_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    config = env.database_config(tmp_path)
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert Path(config["NAME"]).parent == tmp_path


@pytest.fixture
def mysql_driver(monkeypatch):
    """The driver is an optional install; these tests are about parsing, not about the driver."""
    monkeypatch.setitem(sys.modules, "MySQLdb", types.ModuleType("MySQLdb"))


def test_mysql_url_uses_utf8mb4(monkeypatch, tmp_path, mysql_driver):
    monkeypatch.setenv("DATABASE_URL", "mysql://root@127.0.0.1:3306/test")
    config = env.database_config(tmp_path)
    assert config["ENGINE"] == "django.db.backends.mysql"
    assert config["OPTIONS"]["charset"] == "utf8mb4"
    assert config["TEST"]["CHARSET"] == "utf8mb4"


@pytest.mark.parametrize("value", ["postgres://x@y/z", "not a url", "mysql://root@127.0.0.1:3306/"])
def test_malformed_database_url_names_the_variable(monkeypatch, tmp_path, value):
    monkeypatch.setenv("DATABASE_URL", value)
    with pytest.raises(env.EnvError, match="DATABASE_URL"):
        env.database_config(tmp_path)


def test_mysql_url_without_the_driver_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "MySQLdb", None)  # None in sys.modules makes the import fail
    monkeypatch.setenv("DATABASE_URL", "mysql://root:s3cret@127.0.0.1:3306/test")
    with pytest.raises(env.EnvError, match="requirements-mysql.txt") as excinfo:
        env.database_config(tmp_path)
    assert "libmariadb-dev" in str(excinfo.value)
    assert "s3cret" not in str(excinfo.value)


def test_default_install_set_does_not_need_the_mysql_client_headers():
    root = Path(__file__).resolve().parents[2]
    default_set = (root / "requirements.txt").read_text() + (root / "requirements-dev.txt").read_text()
    assert "mysqlclient" not in default_set.lower()
    assert "mysqlclient" in (root / "requirements-mysql.txt").read_text()


def test_password_is_redacted_in_database_url_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", "postgres://user:s3cret@db/x")
    with pytest.raises(env.EnvError) as excinfo:
        env.database_config(tmp_path)
    assert "s3cret" not in str(excinfo.value)


@pytest.mark.parametrize("name,value,func", [
    ("REDIS_URL", "http://localhost:6379", env.redis_url),
    ("OPENAI_BASE_URL", "ftp://llm", env.openai_base_url),
])
def test_malformed_service_urls_name_the_variable(monkeypatch, name, value, func):
    monkeypatch.setenv(name, value)
    with pytest.raises(env.EnvError, match=name):
        func()


def test_milvus_uri_defaults_to_a_lite_file_and_accepts_a_server(monkeypatch, tmp_path):
    monkeypatch.delenv("MILVUS_URI", raising=False)
    assert env.milvus_uri(tmp_path).endswith("milvus.db")
    monkeypatch.setenv("MILVUS_URI", "http://milvus:19530")
    assert env.milvus_uri(tmp_path) == "http://milvus:19530"
    monkeypatch.setenv("MILVUS_URI", "milvus")
    with pytest.raises(env.EnvError, match="MILVUS_URI"):
        env.milvus_uri(tmp_path)


def test_bad_boolean_is_refused(monkeypatch):
    monkeypatch.setenv("DJANGO_DEBUG", "maybe")
    with pytest.raises(env.EnvError, match="DJANGO_DEBUG"):
        env.env_bool("DJANGO_DEBUG", False)


def test_settings_refuse_to_start_with_a_malformed_variable(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={"DJANGO_SETTINGS_MODULE": "project.settings", "DOCMIND_DATA_DIR": str(tmp_path),
             "REDIS_URL": "bogus", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=60,
    )
    assert result.returncode != 0
    assert "DocMind cannot start" in result.stderr and "REDIS_URL" in result.stderr
