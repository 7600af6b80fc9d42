"""Evaluation fixtures: two knowledge bases with a document each, and a task worker drained in the test."""
from __future__ import annotations

import pytest


@pytest.fixture
def bases(settings, tmp_path, django_user_model):
    """HR and finance bases with one document each (in the real indexes); `editor` may edit HR only."""
    from docmind.roles import KB_EDITOR, ensure_roles, user_set_role
    from kb import services
    from kb.ingestion.worker import process_pending_documents
    from kb.models import KbAccess
    from tests.isolation import skip_used_ids

    settings.MEDIA_ROOT = tmp_path / "media"
    ensure_roles()
    skip_used_ids()
    hr = services.kb_create(name="HR-eval", description="people")
    fin = services.kb_create(name="Finance-eval", description="money")
    leave, _ = services.document_ingest_text(
        title="休假制度", text="星河公司的婚假为十天，须在登记后一年内休完。年假为五天，入职满一年后享有。",
        domain="policy", kb=hr)
    budget, _ = services.document_ingest_text(
        title="预算规定", text="星河公司预算超过五万元需要财务总监签字。报销须在三十天内提交。",
        domain="policy", kb=fin)
    process_pending_documents()
    editor = django_user_model.objects.create_user(username="hr-editor", password="pw")
    user_set_role(user=editor, role=KB_EDITOR)
    services.kb_grant(kb=hr, user=editor, access=KbAccess.EDIT)
    return {"hr": hr, "fin": fin, "leave": leave, "budget": budget, "editor": editor}


def drain() -> int:
    """Run the queued evaluation tasks in this thread, as the server's worker thread would."""
    from django_tasks_db.management.commands.db_worker import Worker

    worker = Worker(queue_names=["eval"], interval=0, batch=True, backend_name="default", startup_delay=False,
                    max_tasks=None, worker_id="test-worker", excluded_queue_names=[])
    worker.run()
    return worker._run_tasks
