"""/api/eval/: sets from JSON or files, runs as background work, staff and editors of the set's base only."""
from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from openpyxl import Workbook, load_workbook
from rest_framework.test import APIClient

from evals.importing import parse_file
from evals.models import EvalItem, EvalRun, EvalSet
from kb import services as kb_services
from kb.models import Document, KbAccess

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kb_editor, member, admin_user):
    """HR (edited by eddie, read by alice) and finance (neither), with one document row each."""
    hr = kb_services.kb_create(name="HR-api", description="")
    fin = kb_services.kb_create(name="Fin-api", description="")
    Document.objects.create(title="休假制度", kb=hr, file_type="md", checksum="a")
    Document.objects.create(title="预算规定", kb=fin, file_type="md", checksum="b")
    kb_services.kb_grant(kb=hr, user=kb_editor, access=KbAccess.EDIT)
    kb_services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    return {"hr": hr, "fin": fin}


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


ITEMS = [{"question": "婚假几天？", "answers": [["十天"], ["10天"]], "documents": ["休假制度"], "category": "leave"},
         {"question": "E2 是什么意思？", "answers": [["E2", "重启"]], "documents": [], "category": "manual"}]


def test_an_editor_creates_a_set_from_json_and_reads_it_back(world, kb_editor):
    client = _client(kb_editor)
    response = client.post("/api/eval/sets/", {"name": "leave", "kb": world["hr"].pk, "items": ITEMS}, format="json")
    assert response.status_code == 201, response.content
    body = client.get(f"/api/eval/sets/{response.json()['id']}/").json()
    assert body["item_count"] == 2 and body["kb"] == world["hr"].pk
    assert body["items"][1]["answers"] == [["E2", "重启"]] and body["items"][0]["documents"] == ["休假制度"]
    assert [s["name"] for s in client.get("/api/eval/sets/").json()] == ["leave"]


def test_a_reader_who_is_not_an_editor_is_refused_and_an_unreadable_base_is_not_found(world, member, kb_editor):
    body = {"name": "x", "kb": world["hr"].pk, "items": ITEMS}
    assert _client(member).post("/api/eval/sets/", body, format="json").status_code == 403
    assert _client(kb_editor).post("/api/eval/sets/", {**body, "kb": world["fin"].pk},
                                   format="json").status_code == 404
    eval_set = EvalSet.objects.create(kb=world["fin"], name="finance")
    assert _client(kb_editor).get(f"/api/eval/sets/{eval_set.pk}/").status_code == 404
    assert _client(kb_editor).delete(f"/api/eval/sets/{eval_set.pk}/").status_code == 404
    assert _client(kb_editor).get("/api/eval/sets/").json() == []
    run = EvalRun.objects.create(eval_set=eval_set, total=1)
    assert _client(kb_editor).get(f"/api/eval/runs/{run.pk}/").status_code == 404
    assert _client(kb_editor).post("/api/eval/runs/", {"set": eval_set.pk}, format="json").status_code == 404


def test_a_base_the_editor_only_sees_is_refused_with_403_as_every_edit_path_refuses_it(world, kb_editor):
    # A view grant lets the editor ask finance, so it knows the base: 403, as the knowledge-base and curation APIs
    # answer. Only a base it cannot see at all is 404 (above).
    kb_services.kb_grant(kb=world["fin"], user=kb_editor, access=KbAccess.VIEW)
    client, fin = _client(kb_editor), world["fin"].pk
    eval_set = EvalSet.objects.create(kb=world["fin"], name="finance")
    run = EvalRun.objects.create(eval_set=eval_set, total=1)
    elsewhere = {"kbs": client.patch(f"/api/kbs/{fin}/", {"description": "x"}, format="json").status_code,
                 "qa-pairs": client.post("/api/kb/qa-pairs/", {"kb": fin, "question": "q", "answer": "a"},
                                         format="json").status_code}
    evals = {"create": client.post("/api/eval/sets/", {"name": "x", "kb": fin, "items": ITEMS},
                                   format="json").status_code,
             "set": client.get(f"/api/eval/sets/{eval_set.pk}/").status_code,
             "items": client.post(f"/api/eval/sets/{eval_set.pk}/items/", {"question": "q"},
                                  format="json").status_code,
             "run": client.get(f"/api/eval/runs/{run.pk}/").status_code,
             "start": client.post("/api/eval/runs/", {"set": eval_set.pk}, format="json").status_code}
    pages = Client()
    pages.force_login(kb_editor)
    evals["page"] = pages.get(f"/eval/sets/{eval_set.pk}/").status_code
    assert set(elsewhere.values()) == {403} and evals == dict.fromkeys(evals, 403)
    assert not EvalSet.objects.filter(kb=world["fin"]).exclude(pk=eval_set.pk).exists()
    assert not EvalRun.objects.exclude(pk=run.pk).exists()


def test_a_malformed_csv_names_the_row_and_field_and_saves_nothing(world, kb_editor):
    text = ("question,answers,documents,category\n婚假几天？,十天,休假制度,leave\n,十天,,leave\n"
            "产假？,158天,没有的文件,leave\n")
    upload = SimpleUploadedFile("set.csv", text.encode(), content_type="text/csv")
    response = _client(kb_editor).post("/api/eval/sets/", {"name": "bad", "kb": world["hr"].pk, "file": upload},
                                       format="multipart", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_items" and body["fields"]["3.question"] == ["is required"]
    assert "row 3, question: is required" in body["error"]
    assert not EvalSet.objects.filter(name="bad").exists()


def test_an_unknown_document_is_refused_with_its_row(world, kb_editor):
    items = [ITEMS[0], {"question": "预算？", "answers": ["财务总监"], "documents": ["预算规定"]}]
    response = _client(kb_editor).post("/api/eval/sets/", {"name": "x", "kb": world["hr"].pk, "items": items},
                                       format="json")
    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["2.documents"]


def test_an_xlsx_file_becomes_a_set(world, kb_editor):
    book = Workbook()
    book.active.append(["question", "answers", "documents", "category", "history"])
    book.active.append(["它有几天？", "十天|10天", "休假制度", "followup", "婚假是什么？"])
    data = io.BytesIO()
    book.save(data)
    upload = SimpleUploadedFile("set.xlsx", data.getvalue())
    response = _client(kb_editor).post("/api/eval/sets/", {"name": "sheet", "kb": world["hr"].pk, "file": upload},
                                       format="multipart")
    assert response.status_code == 201, response.content
    item = EvalItem.objects.get(eval_set_id=response.json()["id"])
    assert item.answers == [["十天"], ["10天"]] and item.history == ["婚假是什么？"]


@pytest.mark.parametrize("kind", ["csv", "xlsx", "json"])
def test_the_template_downloads_and_imports_back(kind, kb_editor):
    response = _client(kb_editor).get(f"/api/eval/sets/template/?type={kind}")
    assert response.status_code == 200
    items = parse_file(f"t.{kind}", response.content)
    assert len(items) == 3 and items[1].answers == [["E2", "restart"]] and items[2].history
    if kind == "xlsx":
        assert load_workbook(io.BytesIO(response.content)).active["A1"].value == "question"


def test_items_are_added_edited_and_deleted_one_by_one(world, kb_editor):
    client = _client(kb_editor)
    eval_set = EvalSet.objects.create(kb=world["hr"], name="one by one")
    added = client.post(f"/api/eval/sets/{eval_set.pk}/items/", {"question": "婚假几天？", "answers": [["十天"]],
                                                                  "documents": ["休假制度"]}, format="json")
    assert added.status_code == 201, added.content
    item_id = added.json()["id"]
    patched = client.patch(f"/api/eval/sets/{eval_set.pk}/items/{item_id}/", {"category": "leave"}, format="json")
    assert patched.json()["category"] == "leave" and patched.json()["answers"] == [["十天"]]
    bad = client.patch(f"/api/eval/sets/{eval_set.pk}/items/{item_id}/", {"documents": ["nope"]}, format="json")
    assert bad.status_code == 400 and list(bad.json()["fields"]) == ["1.documents"]
    assert client.delete(f"/api/eval/sets/{eval_set.pk}/items/{item_id}/").status_code == 204
    assert not eval_set.items.exists()


def test_starting_a_run_answers_202_and_a_second_one_conflicts(world, kb_editor, django_capture_on_commit_callbacks):
    client = _client(kb_editor)
    eval_set = client.post("/api/eval/sets/", {"name": "r", "kb": world["hr"].pk, "items": ITEMS},
                           format="json").json()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/eval/runs/", {"set": eval_set["id"]}, format="json")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    run = EvalRun.objects.get(pk=response.json()["id"])
    assert run.task_id and run.total == 2
    assert client.post("/api/eval/runs/", {"set": eval_set["id"]}, format="json").status_code == 409
    listed = client.get(f"/api/eval/runs/?set={eval_set['id']}").json()
    assert [r["id"] for r in listed] == [run.pk]
    detail = client.get(f"/api/eval/runs/{run.pk}/").json()
    assert detail["progress"] == 0 and detail["metrics"]["n"] == 0 and detail["results"] == []
    cancelled = client.post(f"/api/eval/runs/{run.pk}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    assert client.delete(f"/api/eval/runs/{run.pk}/").status_code == 204


def test_deleting_a_set_or_its_base_deletes_its_runs(world, kb_editor, admin_user):
    empty = kb_services.kb_create(name="empty-eval", description="")
    eval_set = EvalSet.objects.create(kb=empty, name="gone")
    run = EvalRun.objects.create(eval_set=eval_set, total=0)
    kb_services.kb_delete(kb=empty)
    assert not EvalSet.objects.filter(pk=eval_set.pk).exists() and not EvalRun.objects.filter(pk=run.pk).exists()
    other = EvalSet.objects.create(kb=world["hr"], name="also gone")
    EvalRun.objects.create(eval_set=other, total=0)
    assert _client(kb_editor).delete(f"/api/eval/sets/{other.pk}/").status_code == 204
    assert not EvalRun.objects.filter(eval_set_id=other.pk).exists()


def test_a_run_of_an_empty_set_is_refused(world, admin_user):
    eval_set = EvalSet.objects.create(kb=world["hr"], name="empty")
    response = _client(admin_user).post("/api/eval/runs/", {"set": eval_set.pk}, format="json")
    assert response.status_code == 400
