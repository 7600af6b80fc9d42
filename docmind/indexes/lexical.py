"""BM25 over child chunks with Milvus full-text search (jieba search-mode tokens, stop words removed)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import nullcontext
from functools import lru_cache
from typing import Any, Protocol

from docmind.indexes.bm25 import Bm25Index
from docmind.indexes.vectorstore import STRONG, MilvusCollection, build_filter
from docmind.text import LEXICAL_STOP_WORDS, _jieba

LEXICAL_COLLECTION = "docmind_lexical"
MAX_TEXT_BYTES = 16_384
LOAD_BATCH = 4096

ANALYZER_PARAMS: dict[str, Any] = {
    "tokenizer": {"type": "jieba", "mode": "search"},
    "filter": ["lowercase", {"type": "stop", "stop_words": LEXICAL_STOP_WORDS}],
}


class LexicalIndex(Protocol):
    """BM25 index of child-chunk texts, keyed by chunk id.

    `add` indexes (or replaces) chunks; `delete_documents` drops every chunk of those documents;
    `search` returns up to k (chunk id, BM25 score) pairs, best first, filters (domain, document,
    knowledge base) applied inside the search. All raise VectorStoreError when the backend fails,
    KbFieldMissing when a knowledge-base filter cannot be applied.
    """

    def add(self, *, ids: Sequence[int], texts: Sequence[str], document_ids: Sequence[int],
            domains: Sequence[str], kb_ids: Sequence[int]) -> None: ...

    def delete_documents(self, document_ids: Sequence[int]) -> None: ...

    def search(self, query: str, *, k: int, domains: Sequence[str] | None = None,
               document_ids: Sequence[int] | None = None,
               kb_ids: Sequence[int] | None = None) -> list[tuple[int, float]]: ...


class MilvusLexicalIndex(MilvusCollection):
    """Milvus' BM25 function: the sparse vectors and corpus statistics live in Milvus itself, so the index
    is persisted, updated incrementally and identical for every server process without any sync code."""

    def __init__(self, *, client: Any, lite_path: str | None, collection: str = LEXICAL_COLLECTION,
                 in_process: bool = False) -> None:
        """`lite_path`: the Lite file `client` opened (None for a Milvus server), beside which the in-process
        index is saved so that the next process starts in seconds; required, since every writer of a Lite
        collection must invalidate that copy. `in_process`: search a Bm25Index written through by this object
        instead of Milvus (Milvus Lite only, where one process owns the file: Lite scores every row in Python
        on every query)."""
        super().__init__(client=client, collection=collection, lite_path=lite_path)
        if lite_path is not None:
            share_term_ids_with_milvus_lite()
        self._ensure()
        if in_process:
            self._local = Bm25Index(terms=term_ids, load=self._read_all, snapshot=self._saved, count=self.count_rows)

    def _ensure(self) -> None:
        with self._lock:
            self._ensure_meta()
            self._create_and_load()
            self._check_kb_field()

    def _create_and_load(self) -> None:
        # heavy: pymilvus (about 1.5 s) loads with the first Milvus client, not with this module
        from pymilvus import DataType, Function, FunctionType

        if not self._client.has_collection(self.collection):
            schema = self._client.create_schema(auto_id=False)
            schema.add_field("id", DataType.INT64, is_primary=True)
            schema.add_field("document_id", DataType.INT64)
            schema.add_field("domain", DataType.VARCHAR, max_length=64)
            # The partition key, as in the vector collection: a server searches only the bases filtered on.
            schema.add_field("kb_id", DataType.INT64, is_partition_key=True)
            schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True,
                             analyzer_params=ANALYZER_PARAMS)
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(Function(name="text_bm25", function_type=FunctionType.BM25,
                                         input_field_names=["text"], output_field_names=["sparse"]))
            index = self._client.prepare_index_params()
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            index.add_index("document_id", index_type="INVERTED")
            self._create_collection(self.collection, schema=schema, index=index)
            self.has_kb_field = True
        self._client.load_collection(self.collection)

    def add(self, *, ids: Sequence[int], texts: Sequence[str], document_ids: Sequence[int],
            domains: Sequence[str], kb_ids: Sequence[int]) -> None:
        if not len(ids):
            return
        self._require_kb_field()
        kb_ids = [int(k) for k in kb_ids]
        rows = [{"id": int(i), "document_id": int(d), "domain": str(dom), "kb_id": kb, "text": _fit(text)}
                for i, text, d, dom, kb in zip(ids, texts, document_ids, domains, kb_ids, strict=True)]
        self._write(lambda local: local.add(ids=ids, texts=[row["text"] for row in rows], document_ids=document_ids,
                                            domains=domains, kb_ids=kb_ids), "upsert", self.collection, rows)

    def flush(self) -> None:
        """Seal written rows: Milvus searches sealed segments through the inverted index and scans growing ones.
        Not done per write: the rows are searchable either way, and a writer seals once per many writes."""
        self._call("flush", self.collection)

    def delete_documents(self, document_ids: Sequence[int]) -> None:
        if document_ids:
            self._write(lambda local: local.delete_documents(document_ids),
                        "delete", self.collection, filter=build_filter(domains=None, document_ids=document_ids))
            self._call("flush", self.collection)

    def delete_ids(self, ids: Sequence[int]) -> None:
        if ids:
            self._write(lambda local: local.delete_ids(ids), "delete", self.collection, ids=[int(i) for i in ids])
            self._call("flush", self.collection)

    def search(self, query: str, *, k: int, domains: Sequence[str] | None = None,
               document_ids: Sequence[int] | None = None,
               kb_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        if k <= 0:
            raise ValueError("k must be positive")
        if kb_ids is not None:
            self._require_kb_field()
        if not query.strip() or any(f is not None and not f for f in (domains, document_ids, kb_ids)):
            return []
        if self._ready():
            return self._local.search(_fit(query), k=k, domains=domains, document_ids=document_ids, kb_ids=kb_ids)
        hits = self._call("search", self.collection, data=[_fit(query)], anns_field="sparse", limit=k,
                          filter=build_filter(domains=domains, document_ids=document_ids, kb_ids=kb_ids),
                          search_params={"metric_type": "BM25"}, output_fields=["kb_id"])
        if kb_ids is not None:
            # Checked again after Milvus' own filter: a hit of another base is never returned.
            allowed = {int(x) for x in kb_ids}
            hits = [[hit for hit in hits[0] if int(hit["entity"]["kb_id"]) in allowed]]
        # Milvus Lite reports BM25 as a negated distance, a Milvus server as a positive score.
        scored = [(int(hit["id"]), abs(float(hit["distance"]))) for hit in hits[0]]
        return [(pk, score) for pk, score in scored if score > 0]

    def retire(self) -> None:
        """Stop the in-process copy's background snapshot saves: a new store replaces this one."""
        if self._local is not None:
            self._local.retire()

    def reset(self) -> None:
        with self._lock, self._local.lock if self._local is not None else nullcontext():
            self._before_write()
            self._drop()
            self._create_and_load()
            if self._local is not None:
                self._local.reset()

    def _read_all(self):
        """Every stored row's term counts (Milvus Lite returns the BM25 function's sparse output), in batches."""
        self._require_kb_field()
        iterator = self._client.query_iterator(self.collection, batch_size=LOAD_BATCH, filter="id >= 0",
                                               output_fields=["id", "document_id", "domain", "kb_id", "sparse"],
                                               consistency_level=STRONG)
        try:
            while batch := iterator.next():
                yield ([int(r["id"]) for r in batch], [r["sparse"] for r in batch],
                       [int(r["document_id"]) for r in batch], [str(r["domain"]) for r in batch],
                       [int(r["kb_id"]) for r in batch])
        finally:
            iterator.close()


def analyze(text: str) -> list[str]:
    """The tokens ANALYZER_PARAMS gives in Milvus Lite: jieba search mode, trimmed, lower-cased, stop words out."""
    stripped = (token.strip().lower() for token in _jieba().cut_for_search(text))
    return [token for token in stripped if token and token not in _STOP]


def term_ids(text: str) -> list[int]:
    """The analyzer's tokens as the term ids Milvus Lite stores in the sparse field (FNV-1a of each token)."""
    with _RECENT_LOCK:
        known = _RECENT.get(text)
    if known is not None:
        return list(known)
    ids = [_term_id(token) for token in analyze(text)]
    with _RECENT_LOCK:
        _RECENT[text] = tuple(ids)
        if len(_RECENT) > RECENT_TEXTS:
            _RECENT.popitem(last=False)
    return ids


# The texts last analysed and their term ids. A write tokenises each text twice in one process, in Milvus Lite's BM25
# function and for the in-process copy (`share_term_ids_with_milvus_lite`), right after one another: the second
# reads the first's result. Bounded by count: an ingestion batch is at most a few hundred child chunks.
RECENT_TEXTS = 1024
_RECENT: OrderedDict[str, tuple[int, ...]] = OrderedDict()
_RECENT_LOCK = threading.Lock()


# Tokens a process has hashed, kept: the hash is a pure-Python loop over each token's UTF-8 bytes (about a
# sixth of a text's term ids after jieba), and a knowledge base's texts and questions reuse a few tens of
# thousands of words over and over.
TERM_ID_CACHE = 1 << 15


@lru_cache(maxsize=TERM_ID_CACHE)
def _term_id(token: str) -> int:
    # heavy: milvus_lite's analyzer (about 0.5 s) loads only when term ids are asked for
    from milvus_lite.analyzer.hash import term_to_id

    return term_to_id(token)


_STOP = frozenset(LEXICAL_STOP_WORDS)


@lru_cache(maxsize=1)  # once a process: the analyzer class is patched in place
def share_term_ids_with_milvus_lite() -> None:
    """Make Milvus Lite's analyzer for ANALYZER_PARAMS use `term_ids`, whose tokens are the same by construction.

    Milvus Lite runs in this process and tokenises every inserted text again for its BM25 function, then hashes each
    token in a pure-Python loop; this way a text is cut once for both copies of the index and its tokens are hashed
    through `_term_id`'s cache. An analyzer configured otherwise keeps its own code. When a milvus_lite release no
    longer has the attributes relied on, nothing is changed: the writes stay correct, only slower."""
    try:
        # heavy: milvus_lite's analyzer (about 0.5 s) loads with the first Lite store, never for a Milvus server
        from milvus_lite.analyzer.jieba_analyzer import JiebaAnalyzer
    except ImportError:  # a milvus_lite without this module: its own analyzer stays
        return
    own = JiebaAnalyzer.analyze

    def analyze_shared(self, text: str) -> list[int]:
        if getattr(self, "_mode", None) == "search" and getattr(self, "_stop_words", None) == _STOP:
            return term_ids(text)
        return own(self, text)

    JiebaAnalyzer.analyze = analyze_shared


def _fit(text: str) -> str:
    """Milvus VARCHAR limits are in bytes; cut on a character boundary rather than fail the insert."""
    data = text.encode("utf-8")
    if len(data) <= MAX_TEXT_BYTES:
        return text
    return data[:MAX_TEXT_BYTES].decode("utf-8", errors="ignore")
