"""The /eval/ staff pages: import, items, runs with progress, failures, the chart and the comparison."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from evals.models import EvalItem, EvalResult, EvalRun, EvalSet, RunStatus
from kb import services as kb_services
from kb.models import Document, KbAccess

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kb_editor, member):
    hr = kb_services.kb_create(name="HR-pages", description="")
    fin = kb_services.kb_create(name="Fin-pages", description="")
    Document.objects.create(title="休假制度", kb=hr, file_type="md", checksum="a")
    kb_services.kb_grant(kb=hr, user=kb_editor, access=KbAccess.EDIT)
    kb_services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    return {"hr": hr, "fin": fin}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _runs(eval_set: EvalSet) -> tuple[EvalRun, EvalRun]:
    item = EvalItem.objects.create(eval_set=eval_set, question="婚假几天？", answers=[["十天"]], documents=["休假制度"])
    a = EvalRun.objects.create(eval_set=eval_set, total=1, status=RunStatus.SUCCEEDED,
                               config={"rag.top_k": 5, "llm.main_model": "m"},
                               metrics={"answer_hit": 0.0, "recall_at_5": 1.0, "mrr": 1.0, "categories": {}})
    b = EvalRun.objects.create(eval_set=eval_set, total=1, status=RunStatus.SUCCEEDED,
                               config={"rag.top_k": 8, "llm.main_model": "m"},
                               metrics={"answer_hit": 1.0, "recall_at_5": 1.0, "mrr": 1.0, "categories": {}})
    EvalResult.objects.create(run=a, item=item, question=item.question, answer="三天", hit=False)
    EvalResult.objects.create(run=b, item=item, question=item.question, answer="十天", hit=True)
    return a, b


def test_an_editor_imports_a_csv_on_the_page(world, kb_editor):
    upload = SimpleUploadedFile("s.csv", "question,answers,documents\n婚假几天？,十天|10天,休假制度\n".encode())
    response = _client(kb_editor).post("/eval/", {"name": "page set", "kb": world["hr"].pk, "file": upload})
    eval_set = EvalSet.objects.get(name="page set")
    assert response.status_code == 302 and response["Location"] == f"/eval/sets/{eval_set.pk}/"
    assert eval_set.items.get().answers == [["十天"], ["10天"]]


def test_a_bad_file_shows_the_row_and_field(world, kb_editor):
    upload = SimpleUploadedFile("s.csv", "question,answers,documents\n婚假几天？,十天,没有\n".encode())
    response = _client(kb_editor).post("/eval/", {"name": "bad", "kb": world["hr"].pk, "file": upload}, follow=True,
                                       HTTP_ACCEPT_LANGUAGE="en")
    assert "row 2, documents" in response.content.decode()
    assert not EvalSet.objects.filter(name="bad").exists()


def test_the_set_page_draws_the_metrics_chart_and_the_run_page_filters_to_failures(world, kb_editor):
    eval_set = EvalSet.objects.create(kb=world["hr"], name="charted")
    a, b = _runs(eval_set)
    page = _client(kb_editor).get(f"/eval/sets/{eval_set.pk}/").content.decode()
    assert "<svg" in page and "<polyline" in page and "婚假几天？" in page
    run_page = _client(kb_editor).get(f"/eval/runs/{a.pk}/?failures=1").content.decode()
    assert "三天" in run_page
    assert "十天" not in _client(kb_editor).get(f"/eval/runs/{b.pk}/?failures=1").content.decode().split(
        "ev-results")[1]


def test_the_comparison_lists_flipped_items_and_differing_configuration(world, kb_editor):
    eval_set = EvalSet.objects.create(kb=world["hr"], name="compared")
    a, b = _runs(eval_set)
    page = _client(kb_editor).get(f"/eval/compare/?a={b.pk}&b={a.pk}", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "rag.top_k" in page and "llm.main_model" not in page
    assert "now right" in page and "婚假几天？" in page


def test_a_running_run_page_refreshes_itself_and_can_be_cancelled(world, kb_editor):
    eval_set = EvalSet.objects.create(kb=world["hr"], name="running")
    EvalItem.objects.create(eval_set=eval_set, question="q")
    run = EvalRun.objects.create(eval_set=eval_set, total=4, done=1, status=RunStatus.RUNNING)
    page = _client(kb_editor).get(f"/eval/runs/{run.pk}/").content.decode()
    assert 'http-equiv="refresh"' in page and '<progress max="100" value="25">' in page
    _client(kb_editor).post(f"/eval/runs/{run.pk}/", {"action": "cancel"})
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLING


def test_members_and_editors_of_other_bases_do_not_see_the_pages(world, member, kb_editor):
    assert _client(member).get("/eval/").status_code == 403
    other = EvalSet.objects.create(kb=world["fin"], name="finance")
    assert _client(kb_editor).get(f"/eval/sets/{other.pk}/").status_code == 404
    assert "finance" not in _client(kb_editor).get("/eval/").content.decode()


def test_a_jsonl_file_adds_items_to_an_existing_set_after_its_last(world, kb_editor):
    eval_set = EvalSet.objects.create(kb=world["hr"], name="growing")
    EvalItem.objects.create(eval_set=eval_set, question="第一题", position=0)
    lines = ['{"question": "婚假几天？", "answers": [["十天"]], "documents": ["休假制度"]}',
             '{"question": "年假几天？", "answers": "五天"}']
    upload = SimpleUploadedFile("more.jsonl", "\n".join(lines).encode())
    response = _client(kb_editor).post(f"/eval/sets/{eval_set.pk}/", {"action": "import", "file": upload})
    assert response.status_code == 302
    assert list(eval_set.items.values_list("question", flat=True)) == ["第一题", "婚假几天？", "年假几天？"]


def test_one_bad_line_names_its_row_and_adds_nothing(world, kb_editor):
    eval_set = EvalSet.objects.create(kb=world["hr"], name="guarded")
    lines = ['{"question": "婚假几天？"}', '{"question": ', '{"question": "年假？", "documents": ["没有"]}']
    upload = SimpleUploadedFile("bad.jsonl", "\n".join(lines).encode())
    page = _client(kb_editor).post(f"/eval/sets/{eval_set.pk}/", {"action": "import", "file": upload}, follow=True,
                                   HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "row 2, line: is not valid JSON" in page
    assert not eval_set.items.exists()


def test_past_twenty_errors_the_page_says_how_many_more(world, kb_editor):
    rows = "question,documents\n" + "".join(f"问题{n},没有\n" for n in range(25))
    upload = SimpleUploadedFile("many.csv", rows.encode())
    page = _client(kb_editor).post("/eval/", {"name": "many", "kb": world["hr"].pk, "file": upload}, follow=True,
                                   HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert page.count("row ") == 20 and "and 5 more errors; nothing was imported" in page
    assert not EvalSet.objects.filter(name="many").exists()
