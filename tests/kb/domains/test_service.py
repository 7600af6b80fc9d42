"""KnowledgeDomainService: profiles into metadata, re-aggregates one domain, fills missing rows at start-up."""
from __future__ import annotations

import pytest
import yaml

from config_admin.services import config_set
from kb.domains.aggregator import DomainAggregator
from kb.domains.knowledge_map import current_knowledge_map
from kb.domains.profiler import DocumentProfiler
from kb.domains.service import KnowledgeDomainService, build_domain_service
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeDomain

pytestmark = pytest.mark.django_db


@pytest.fixture
def service() -> KnowledgeDomainService:
    return KnowledgeDomainService(profiler=DocumentProfiler(chat_model=None, model="m"),
                                  aggregator=DomainAggregator(chat_model=None, model="m"))


def _doc(title: str, domain: str, text: str, status: str = DocumentStatus.READY) -> Document:
    doc = Document.objects.create(title=title, file_type="txt", domain=domain, status=status,
                                  checksum=f"{title}-{domain}", metadata={"chars": len(text)})
    Chunk.objects.create(document=doc, level=ChunkLevel.PARENT, ordinal=0, content=text, char_start=0,
                         char_end=len(text))
    return doc


def test_ingestion_profiles_the_document_and_aggregates_its_domain(service):
    doc = _doc("支付手册", "payment", "# 支付失败排查\n支付超时、扣款无回调时检查网关日志。\n# 退款处理\n退款未到账。")
    service.on_document_ingested(doc)
    doc.refresh_from_db()
    assert doc.metadata["covers"][:2] == ["支付失败排查", "退款处理"] and doc.metadata["chars"] > 0
    row = KnowledgeDomain.objects.get(domain_id="payment")
    assert row.document_count == 1 and "支付失败排查" in row.when_to_retrieve and row.description


def test_a_change_re_aggregates_only_that_domain_and_keeps_an_admin_description(service):
    pay = _doc("支付手册", "payment", "# 支付失败排查\n支付超时。")
    _doc("部署手册", "infra", "# 容器部署\n镜像构建。")
    for domain in ("payment", "infra"):
        service.on_document_change(domain, kb_id=pay.kb_id)
    # As the domain admin saves a description: the row becomes the administrator's and outlives its documents.
    KnowledgeDomain.objects.filter(domain_id="payment").update(description="管理员写的描述",
                                                               created_automatically=False)
    infra_before = KnowledgeDomain.objects.get(domain_id="infra").updated_at
    pay.delete()
    row = service.on_document_change("payment", kb_id=pay.kb_id)
    assert row.description == "管理员写的描述" and row.document_count == 0 and row.when_to_retrieve == ""
    assert KnowledgeDomain.objects.get(domain_id="infra").updated_at == infra_before


def test_load_index_generates_domains_without_a_row(service):
    _doc("部署手册", "infra", "# 容器部署\n镜像构建与发布。")
    _doc("草稿", "drafts", "未完成", status=DocumentStatus.PROCESSING)
    assert service.load_index() == ["infra"]
    assert Document.objects.get(title="部署手册").metadata["covers"]
    assert service.load_index() == []


def test_the_knowledge_map_lists_ready_documents_with_their_covers(service):
    doc = _doc("支付手册", "payment", "# 支付失败排查\n支付超时。")
    service.on_document_ingested(doc)
    data = yaml.safe_load(current_knowledge_map(kb_ids=[doc.kb_id]))
    domain = data["available_knowledge_domains"][0]
    assert domain["domain_id"] == "payment" and domain["documents"][0]["title"] == "支付手册"
    assert "支付失败排查" in domain["documents"][0]["covers"]


def test_regeneration_cleans_a_domain_written_with_markup_in_its_tags(service):
    doc = _doc("差旅手册", "hr", "## 乘坐交通\n乘坐高铁二等座。## ## ##")
    Document.objects.filter(pk=doc.pk).update(metadata={"covers": ["##", "乘坐", "交通"], "when_to_retrieve": "x"})
    KnowledgeDomain.objects.create(domain_id="hr", description="hr：##、乘坐、交通",
                                   when_to_retrieve="用户问题涉及##、乘坐、交通时检索")
    row = service.regenerate("hr", kb_id=doc.kb_id)
    doc.refresh_from_db()
    assert "##" not in doc.metadata["covers"] and "乘坐交通" in doc.metadata["covers"]
    assert "#" not in row.description and row.description.startswith("hr：")
    assert "#" not in row.when_to_retrieve


def test_an_admin_description_is_kept_but_loses_its_markup(service):
    doc = _doc("差旅手册", "hr", "## 乘坐交通\n乘坐高铁二等座。")
    KnowledgeDomain.objects.create(domain_id="hr", description="**人事**制度、##、差旅")
    assert service.on_document_change("hr", kb_id=doc.kb_id).description == "人事制度、差旅"


def test_the_knowledge_map_never_shows_markup_covers(service):
    doc = _doc("差旅手册", "hr", "乘坐高铁。")
    Document.objects.filter(pk=doc.pk).update(metadata={"covers": ["##", "<b>乘坐</b>"]})
    KnowledgeDomain.objects.create(domain_id="hr", description="hr：##、乘坐", when_to_retrieve="涉及##、乘坐时检索")
    [domain] = yaml.safe_load(current_knowledge_map(kb_ids=[doc.kb_id]))["available_knowledge_domains"]
    assert domain["documents"][0]["covers"] == ["乘坐"]
    assert (domain["description"], domain["when_to_retrieve"]) == ("hr：乘坐", "涉及乘坐时检索")


def test_domains_and_the_map_are_per_knowledge_base(service):
    from kb import services

    other = services.kb_create(name="other")
    mine = _doc("支付手册", "payment", "# 支付失败排查\n支付超时。")
    theirs = Document.objects.create(title="机密手册", file_type="txt", domain="payment", status=DocumentStatus.READY,
                                     checksum="theirs", kb=other, metadata={"covers": ["机密条款"]})
    service.on_document_ingested(mine)
    service.on_document_change("payment", kb_id=other.pk)
    assert KnowledgeDomain.objects.filter(domain_id="payment").count() == 2
    mine_row = KnowledgeDomain.objects.get(domain_id="payment", kb_id=mine.kb_id)
    assert "机密" not in (mine_row.when_to_retrieve or "") and mine_row.document_count == 1
    text = current_knowledge_map(kb_ids=[mine.kb_id])
    assert "支付手册" in text and "机密" not in text
    assert theirs.title in current_knowledge_map(kb_ids=[other.pk])
    assert current_knowledge_map(kb_ids=[]).strip().endswith("[]")


def test_the_built_service_asks_for_reply_schemas_as_llm_structured_outputs_says():
    assert build_domain_service().profiler.structured_outputs == "auto"
    config_set(key="llm.structured_outputs", value="off")
    built = build_domain_service()
    assert (built.profiler.structured_outputs, built.aggregator.structured_outputs) == ("off", "off")


def test_documents_profiled_together_each_get_their_own_profile_and_keep_their_metadata(service):
    payment = _doc("支付手册", "payment", "# 支付失败排查\n支付超时时检查网关日志。")
    leave = _doc("休假制度", "hr", "# 年假\n入职满一年享有五天年假。")
    Chunk.objects.create(document=leave, level=ChunkLevel.PARENT, ordinal=1, content="# 病假\n病假需提供证明。",
                         char_start=0, char_end=10)
    assert service.profile_documents([payment, leave]) == []
    payment.refresh_from_db()
    leave.refresh_from_db()
    assert payment.metadata["covers"][0] == "支付失败排查" and "年假" not in payment.metadata["covers"]
    assert leave.metadata["covers"][:2] == ["年假", "病假"]  # both parent chunks, in order
    assert payment.metadata["chars"] > 0 and leave.metadata["profile_source"] == "offline"


def test_a_document_whose_profile_fails_does_not_stop_the_others_profiled_with_it(service, monkeypatch):
    broken, fine = _doc("坏文档", "misc", "# 报销流程\n内容。"), _doc("好文档", "misc", "# 请假流程\n内容。")
    run = service.profiler.run

    def failing(*, title, text):
        if title == "坏文档":
            raise RuntimeError("profiler bug")
        return run(title=title, text=text)

    monkeypatch.setattr(service.profiler, "run", failing)
    assert service.profile_documents([broken, fine]) == [broken]
    broken.refresh_from_db()
    fine.refresh_from_db()
    assert "covers" not in broken.metadata and fine.metadata["covers"][0] == "请假流程"


def test_documents_profiled_together_let_a_question_go_first_between_two_of_them(service, monkeypatch):
    first, second = _doc("甲文档", "misc", "# 报销流程\n内容。"), _doc("乙文档", "misc", "# 请假流程\n内容。")
    steps: list[str] = []
    run = service.profiler.run

    def recorded(*, title, text):
        steps.append(title)
        return run(title=title, text=text)

    monkeypatch.setattr(service.profiler, "run", recorded)
    monkeypatch.setattr("kb.domains.service.give_way", lambda: steps.append("give way"))
    assert service.profile_documents([first, second]) == []
    assert steps == ["甲文档", "give way", "乙文档"]
