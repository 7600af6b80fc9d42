"""Several workers on one queue: each document is claimed once, by threads and by kb_worker processes."""
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.db import connection

from kb.ingestion.worker import claim_next
from kb.models import Document, DocumentStatus
from kb.services import document_ingest_text
from tests.conftest import require_services

ROOT = Path(__file__).resolve().parents[3]
TEXT = "向量检索把文本变成向量。BM25 按词频打分。两者融合效果更好。"


@pytest.mark.django_db(transaction=True)
def test_workers_racing_for_the_queue_claim_each_document_exactly_once(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    created = {document_ingest_text(title=f"q{i}", text=f"{i} {TEXT}", domain="general")[0].pk for i in range(30)}
    claimed: dict[str, list[int]] = {"a": [], "b": []}
    start = threading.Barrier(2)

    def work(name: str) -> None:
        from django.db import connection as own

        try:
            start.wait(10)
            while (document_id := claim_next()) is not None:
                claimed[name].append(document_id)
        finally:
            own.close()

    threads = [threading.Thread(target=work, args=(name,)) for name in claimed]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not set(claimed["a"]) & set(claimed["b"])
    assert set(claimed["a"]) | set(claimed["b"]) == created
    assert set(Document.objects.values_list("attempts", flat=True)) == {1}


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"mysql://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/{db['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_two_kb_worker_processes_share_the_queue_on_mariadb(settings, tmp_path):
    if connection.vendor != "mysql":
        if require_services() and os.environ.get("REDIS_URL"):
            pytest.fail("DATABASE_URL must name MariaDB when the services run")
        pytest.skip("several worker processes need a database server (DATABASE_URL=mysql://…)")
    media = tmp_path / "media"
    settings.MEDIA_ROOT = media
    created = [document_ingest_text(title=f"p{i}", text=f"第{i}篇。" + TEXT * 3, domain="general")[0].pk
               for i in range(8)]
    workers = []
    for name in ("a", "b"):
        data_dir = tmp_path / name  # own Milvus Lite file each: only the queue is shared here
        data_dir.mkdir()
        (data_dir / "media").symlink_to(media)
        env = {**os.environ, "DOCMIND_DATA_DIR": str(data_dir), "DATABASE_URL": _database_url(),
               "DOCMIND_INGEST_WORKER": "false", "DOCMIND_INGEST_THREADS": "1"}
        workers.append(subprocess.Popen([sys.executable, "manage.py", "kb_worker", "--until-idle", "--poll", "0.2"],
                                        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    logs = []
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err[-3000:]
        logs.append(err)
    claimed = [[int(pk) for pk in re.findall(r"claimed document (\d+)", log)] for log in logs]
    assert sorted(claimed[0] + claimed[1]) == sorted(created)  # every document once, by one worker
    statuses = dict(Document.objects.filter(pk__in=created).values_list("pk", "status"))
    assert set(statuses.values()) == {DocumentStatus.READY}
    assert set(Document.objects.filter(pk__in=created).values_list("attempts", flat=True)) == {1}
