"""manage.py eval_retrieval: ingests a SQuAD file once, asks every question, prints both metric rows."""
import json
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db(transaction=True)  # BM25 runs on a pool thread with its own connection

SET = {"data": [{"title": "地理", "paragraphs": [
    {"context": "珠穆朗玛峰是世界最高峰，海拔8848.86米，位于喜马拉雅山脉。",
     "qas": [{"question": "珠穆朗玛峰海拔多少米？", "answers": [{"text": "8848.86米"}]}]},
    {"context": "长江是中国最长的河流，全长约6300公里。",
     "qas": [{"question": "中国最长的河流是哪条？", "answers": [{"text": "长江"}]}]},
    {"context": "咖啡豆烘焙后研磨成粉，再用热水萃取就得到咖啡。",
     "qas": [{"question": "咖啡是怎么做出来的？", "answers": [{"text": "热水萃取"}]}]},
]}]}


@pytest.fixture
def squad_file(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(SET, ensure_ascii=False), encoding="utf-8")
    return path


def test_it_finds_each_gold_paragraph_and_reuses_the_documents_on_a_second_run(kb_index, squad_file):
    out = StringIO()
    call_command("eval_retrieval", str(squad_file), "--top-k", "2", stdout=out)
    text = out.getvalue()
    assert "ingesting 3 new documents" in text and "asking 3 questions over 3 documents (top_k 2" in text
    pipeline = next(line for line in text.splitlines() if line.startswith("pipeline"))
    assert "recall@1 1.0000" in pipeline and "answer-in-evidence@5 1.0000" in pipeline
    assert any(line.startswith("bm25") for line in text.splitlines())
    again = StringIO()
    call_command("eval_retrieval", str(squad_file), "--limit", "1", stdout=again)
    assert "ingesting" not in again.getvalue() and "asking 1 questions" in again.getvalue()


@pytest.mark.parametrize(("args", "message"), [(["--limit", "0"], "--limit"), (["--top-k", "51"], "--top-k"),
                                               (["--set", "no.such.key=1"], "--set")])
def test_bad_options_are_refused_with_a_clear_error(kb_index, squad_file, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("eval_retrieval", str(squad_file), *args, stdout=StringIO())


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(CommandError, match="is not a file"):
        call_command("eval_retrieval", str(tmp_path / "missing.json"))


def test_without_the_baseline_package_it_says_how_to_install_it_before_ingesting(squad_file, monkeypatch):
    from kb.models import Document

    monkeypatch.setitem(sys.modules, "rank_bm25", None)  # what an install without requirements-bench.txt looks like
    with pytest.raises(CommandError, match="pip install -r requirements-bench.txt"):
        call_command("eval_retrieval", str(squad_file), stdout=StringIO())
    assert not Document.objects.exists()
