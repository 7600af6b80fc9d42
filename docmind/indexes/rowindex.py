"""RowIndex: the id / document / domain / knowledge-base / liveness columns shared by the in-process read indexes."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from docmind.indexes.snapshot import IndexSnapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rows:
    """An immutable version of the row columns; readers hold one while writers build the next.

    Row r is chunk `ids[r]` of document `document_ids[r]` in domain `domain_names[domain_codes[r]]` of
    knowledge base `kb_ids[r]`; `alive[r]` is False once the chunk was deleted or replaced by a later row.
    """

    ids: np.ndarray
    document_ids: np.ndarray
    domain_codes: np.ndarray
    alive: np.ndarray
    domain_names: dict[str, int]
    kb_ids: np.ndarray

    @property
    def count(self) -> int:
        return len(self.ids)

    def filter_mask(self, *, domains: Sequence[str] | None, document_ids: Sequence[int] | None,
                    kb_ids: Sequence[int] | None = None) -> np.ndarray:
        """Live rows that pass the domain, document and knowledge-base filters (None means no filter)."""
        mask = self.alive.copy()
        if kb_ids is not None:
            mask &= np.isin(self.kb_ids, np.asarray([int(k) for k in kb_ids], dtype=np.int64))
        if domains is not None:
            codes = [self.domain_names[d] for d in map(str, domains) if d in self.domain_names]
            mask &= np.isin(self.domain_codes, np.asarray(codes, dtype=np.int32))
        if document_ids is not None:
            mask &= np.isin(self.document_ids, np.asarray([int(d) for d in document_ids], dtype=np.int64))
        return mask


EMPTY_ROWS = Rows(ids=np.zeros(0, np.int64), document_ids=np.zeros(0, np.int64),
                  domain_codes=np.zeros(0, np.int32), alive=np.zeros(0, bool), domain_names={},
                  kb_ids=np.zeros(0, np.int64))


def kb_column(kb_ids: Sequence[int] | None, count: int) -> np.ndarray:
    """The knowledge-base column of `count` new rows; rows written without one (memories) get 0, which
    no knowledge base has, so a knowledge-base filter never matches them."""
    if kb_ids is None:
        return np.zeros(count, np.int64)
    column = np.asarray(kb_ids, dtype=np.int64)
    if column.shape != (count,):
        raise ValueError(f"expected {count} knowledge-base ids, got {column.shape}")
    return column


class RowIndex:
    """Builds new `Rows` versions for appends and deletions; the caller holds the write lock.

    `row_of` maps a chunk id to its live row and is used only under that lock.
    """

    def __init__(self) -> None:
        self.rows = EMPTY_ROWS
        self.row_of: dict[int, int] = {}

    def appended(self, *, ids: Sequence[int], document_ids: Sequence[int], domains: Sequence[str],
                 kb_ids: Sequence[int] | None = None) -> Rows:
        """The next version with these rows appended; an id already present loses its old row."""
        old = self.rows
        alive = np.concatenate([old.alive, np.ones(len(ids), bool)])
        names = dict(old.domain_names)
        codes = np.asarray([names.setdefault(str(d), len(names)) for d in domains], dtype=np.int32)
        for offset, pk in enumerate(ids):
            previous = self.row_of.get(int(pk))
            if previous is not None:
                alive[previous] = False
            self.row_of[int(pk)] = old.count + offset
        return Rows(ids=np.concatenate([old.ids, np.asarray(ids, dtype=np.int64)]),
                    document_ids=np.concatenate([old.document_ids, np.asarray(document_ids, dtype=np.int64)]),
                    domain_codes=np.concatenate([old.domain_codes, codes]), alive=alive, domain_names=names,
                    kb_ids=np.concatenate([old.kb_ids, kb_column(kb_ids, len(ids))]))

    def without(self, dead: np.ndarray) -> Rows:
        """The next version with the rows in the boolean mask `dead` marked deleted."""
        old = self.rows
        for pk in old.ids[dead & old.alive]:
            self.row_of.pop(int(pk), None)
        return Rows(ids=old.ids, document_ids=old.document_ids, domain_codes=old.domain_codes,
                    alive=old.alive & ~dead, domain_names=old.domain_names, kb_ids=old.kb_ids)

    def dead_ids(self, ids: Sequence[int]) -> np.ndarray:
        return np.isin(self.rows.ids, np.asarray([int(i) for i in ids], dtype=np.int64))

    def dead_documents(self, document_ids: Sequence[int]) -> np.ndarray:
        return np.isin(self.rows.document_ids, np.asarray([int(d) for d in document_ids], dtype=np.int64))

    def compacted(self) -> tuple[Rows, np.ndarray]:
        """The next version keeping live rows only, and the kept old row numbers (to compact the data)."""
        old = self.rows
        keep = np.flatnonzero(old.alive)
        rows = Rows(ids=old.ids[keep], document_ids=old.document_ids[keep], domain_codes=old.domain_codes[keep],
                    alive=np.ones(len(keep), bool), domain_names=old.domain_names, kb_ids=old.kb_ids[keep])
        self.row_of = {int(pk): r for r, pk in enumerate(rows.ids)}
        return rows, keep

    def should_compact(self) -> bool:
        dead = self.rows.count - int(self.rows.alive.sum())
        return dead > max(1024, self.rows.count // 4)


def top_k(scores: np.ndarray, rows: np.ndarray, k: int) -> list[tuple[np.int64, float]]:
    """The k best (row, score) pairs, best first; `rows[i]` is the row of `scores[i]`."""
    if len(scores) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        scores, rows = scores[part], rows[part]
    order = np.argsort(-scores, kind="stable")
    return [(rows[i], float(scores[i])) for i in order]



def load_in_background(name: str, load: Callable[[], object], guard: threading.Lock) -> None:
    """Run `load` in a daemon thread unless one holding `guard` is still running."""
    if not guard.acquire(blocking=False):
        return

    def run() -> None:
        try:
            load()
        except Exception:
            log.exception("in-process index: loading %s failed; Milvus keeps answering", name)
        finally:
            guard.release()

    threading.Thread(target=run, name=f"docmind-load-{name}", daemon=True).start()


class WriteThroughIndex:
    """What the in-process copies (DenseIndex, Bm25Index) share: load once from the store, then apply
    every write the store makes, under `lock`, which the store also holds around its own write so that
    a load never misses one. Searches take no lock: they read the immutable version `_publish` made.

    A load never holds `lock` for long, so writes never wait for it (a load from Milvus Lite takes
    ~40 s at 100k rows): it reads the store batch by batch and takes the lock only to append each
    batch, while writes made meanwhile are applied to the store and queued here, then replayed on
    top of what was read (replaying is idempotent: an upsert replaces the row read, a delete removes
    it). `snapshot`, when given, restores a copy saved by an earlier process instead of reading the
    store, if the store confirms that nothing was written since (docmind.indexes.snapshot); after a full read
    and after writes settle, a new snapshot is saved in the background.

    Subclasses define `_append`, `_delete`, `_publish`, `_clear`, and for snapshots `_arrays` and `_restore`.
    """

    kind = "rows"

    def __init__(self, *, load: Callable[[], Iterable[tuple]], snapshot: IndexSnapshot | None = None,
                 count: Callable[[], int] | None = None) -> None:
        """`count`: how many rows the store holds now, checked against a restored snapshot."""
        self.lock = threading.RLock()
        self._count = count
        self._loading = threading.Lock()  # held by a background warm-up thread
        self._load_lock = threading.Lock()  # one load at a time; waiting searches wait here, writes never do
        self._load = load
        self._snapshot = snapshot
        self._index = RowIndex()
        self._version: object | None = None
        self._pending: list[Callable[[], None]] | None = None  # writes seen while a load runs
        self._generation = 0  # bumped by reset / invalidate: a load that started before is discarded
        self._retired = False  # replaced by a new store in this process: never save a snapshot again

    @property
    def ready(self) -> bool:
        return self._version is not None

    def warm_up(self, *, wait: bool = False) -> None:
        """Load from the store now, or in a background thread (the store answers searches itself meanwhile)."""
        if wait:
            self._current()
        elif not self.ready:
            load_in_background(self.kind, self._current, self._loading)

    def delete_ids(self, ids: Sequence[int]) -> None:
        self._apply(lambda: self._delete(self._index.dead_ids(ids)))

    def delete_documents(self, document_ids: Sequence[int]) -> None:
        self._apply(lambda: self._delete(self._index.dead_documents(document_ids)))

    def reset(self) -> None:
        """Empty, and loaded: the store was just emptied."""
        with self.lock:
            self._generation += 1
            self._pending = None
            self._clear()
            self._publish()
            if self._snapshot is not None:
                self._snapshot.loading()  # as whole as the emptied store

    def invalidate(self) -> None:
        """Forget the content: the next search loads it again from the store."""
        with self.lock:
            self._generation += 1
            self._pending = None
            self._clear()
            self._version = None

    def save_snapshot(self) -> bool:
        """Save the current version for the next process; False when a write came in meanwhile or nothing to save."""
        if self._snapshot is None:
            return False
        with self.lock:  # the arrays are copied under the lock (a fraction of a second at 100k rows)
            version, generation = self._version, self._generation
            if version is None or self._retired:
                return False
            arrays = self._arrays(version)
        return self._snapshot.save(arrays, lock=self.lock,
                                   still_current=lambda: (not self._retired and self._generation == generation
                                                          and self._version is version))

    def retire(self) -> None:
        """This copy is being replaced by a new store in the same process: it must never publish a snapshot
        again (its state would overwrite what the new store writes), so pending saves are cancelled and a
        save already running finds itself out of date."""
        with self.lock:
            self._retired = True
        if self._snapshot is not None:
            self._snapshot.cancel()

    def _apply(self, change: Callable[[], None]) -> None:
        """A write the store just made (the caller holds `lock`): apply it now, queue it behind a running load,
        or leave it to the load that has not started yet."""
        with self.lock:
            if self._pending is not None:
                self._pending.append(change)
            elif self._version is not None:
                change()
                self._publish()
                if self._snapshot is not None:
                    self._snapshot.schedule(self.save_snapshot)

    def _current(self):
        version = self._version
        if version is not None and self._snapshot is not None and self._snapshot.missed_writes():
            # Another store of the same Lite file in this process wrote what this copy lacks (a replaced store
            # still writing, `kb_reindex`): read the store again.
            self.invalidate()
            version = None
        if version is None:
            with self._load_lock:
                if self._version is None:
                    self._load_now()
                version = self._version
        return version

    def _load_now(self) -> None:
        started = time.perf_counter()
        with self.lock:
            generation = self._generation
            self._pending = []
            self._clear()
            if self._snapshot is not None:
                self._snapshot.loading()
        restored = self._snapshot is not None and self._restore_snapshot(generation)
        if not restored:
            for batch in self._load():
                with self.lock:
                    if self._generation != generation:
                        return
                    self._append(*batch)
        with self.lock:
            if self._generation != generation:
                return
            for change in self._pending or ():
                change()
            self._pending = None
            self._publish()
        log.info("in-process index: %s %d %s in %.1f s", "restored" if restored else "loaded",
                 self._index.rows.count, self.kind, time.perf_counter() - started)
        if not restored and self._snapshot is not None:
            self._snapshot.schedule(self.save_snapshot, delay=0.0)

    def _restore_snapshot(self, generation: int) -> bool:
        try:
            arrays = self._snapshot.load()
        except Exception:
            log.exception("in-process index: the %s snapshot could not be read; loading from the store", self.kind)
            return False
        if arrays is None:
            return False
        # The token proves the snapshot describes what the store holds; the row count checks it as well, so a
        # snapshot left valid by a write it lacks is read again from the store rather than searched.
        try:
            expected = self._count() if self._count is not None else None
        except Exception:
            log.exception("in-process index: the %s store could not count its rows; loading from it", self.kind)
            return False
        with self.lock:
            if self._generation != generation:
                return False
            try:
                self._restore(arrays)
            except Exception:
                log.exception("in-process index: the %s snapshot is unusable; loading from the store", self.kind)
                self._clear()
                return False
            live = int(np.count_nonzero(self._index.rows.alive))
            if expected is not None and live != expected:
                log.warning("in-process index: the %s snapshot holds %d rows, the store %d; loading from the store",
                            self.kind, live, expected)
                self._clear()
                return False
        return True

    def _append(self, ids, payload, document_ids, domains, kb_ids=None) -> None:
        raise NotImplementedError

    def _delete(self, dead: np.ndarray) -> None:
        raise NotImplementedError

    def _publish(self) -> None:
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError

    def _arrays(self, version) -> dict[str, np.ndarray]:
        """The live content of `version` as named arrays (a snapshot)."""
        raise NotImplementedError

    def _restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Set the content from `_arrays`' output (under the lock)."""
        raise NotImplementedError


def rows_arrays(rows: Rows) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The live rows as snapshot arrays, and the kept row numbers (to pick the matching data rows)."""
    keep = np.flatnonzero(rows.alive)
    names = sorted(rows.domain_names, key=rows.domain_names.__getitem__)
    return ({"ids": rows.ids[keep], "document_ids": rows.document_ids[keep], "kb_ids": rows.kb_ids[keep],
             "domain_codes": rows.domain_codes[keep], "domain_names": np.asarray(names, dtype=str)}, keep)


def rows_index(arrays: dict[str, np.ndarray]) -> RowIndex:
    """A RowIndex holding the rows saved by `rows_arrays`. A snapshot saved before rows had a knowledge
    base raises KeyError (the caller then reads the store again): guessing one would defeat the filter."""
    index = RowIndex()
    ids = arrays["ids"].astype(np.int64)
    kb_ids = arrays["kb_ids"].astype(np.int64)
    if len(kb_ids) != len(ids):
        raise ValueError("snapshot knowledge-base column disagrees in size")
    index.rows = Rows(ids=ids, document_ids=arrays["document_ids"].astype(np.int64),
                      domain_codes=arrays["domain_codes"].astype(np.int32), alive=np.ones(len(ids), bool),
                      domain_names={str(name): code for code, name in enumerate(arrays["domain_names"].tolist())},
                      kb_ids=kb_ids)
    index.row_of = dict(zip(ids.tolist(), range(len(ids)), strict=True))
    return index
