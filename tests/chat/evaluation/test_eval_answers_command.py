"""`manage.py eval_answers`: a question set asked through the chat pipeline, with the report written."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_asks_the_set_and_writes_the_report(seeded, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "# 星河公司休假制度\n\n星河公司的婚假为十天，须在登记后一年内休完。\n"
    (docs / "leave.md").write_text(text, encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"id": "a", "question": "星河公司的婚假有几天？", "category": "short", "split": "check", "answers": ["十天"],
         "documents": ["leave.md"]},
        {"id": "b", "question": "我在上海工作", "category": "statement", "split": "tune", "answers": [],
         "documents": []},
    ]), encoding="utf-8")
    out = tmp_path / "out.json"

    call_command("eval_answers", str(questions), "--json", str(out))

    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["mode"] == "offline"
    assert result["report"]["overall"]["n"] == 2
    row = next(r for r in result["rows"] if r["id"] == "a")
    assert row["hit"] and row["cites_gold"] and row["retrieved"][0] == "leave.md"


def test_it_refuses_a_set_whose_documents_are_missing(tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "x?", "category": "short", "answers": ["y"],
                                     "documents": ["absent.md"]}), encoding="utf-8")
    with pytest.raises(CommandError, match="absent.md"):
        call_command("eval_answers", str(questions))


def test_it_refuses_a_database_that_is_not_migrated_before_ingesting_anything(tmp_path, monkeypatch):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "x?", "category": "short", "answers": ["y"], "documents": []}),
                         encoding="utf-8")
    monkeypatch.setattr("chat.management.commands.eval_answers.unapplied_migrations", lambda: ["kb.0001_initial"])
    with pytest.raises(CommandError, match="manage.py migrate"):
        call_command("eval_answers", str(questions))
