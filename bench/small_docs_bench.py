"""Many small documents uploaded one by one through POST /api/kb/documents/, against the all-core embedder.

Run (a throw-away data dir each time; writes JSON; --smoke: two documents, no latency round):
  .venv/bin/python -u -m bench.small_docs_bench --docs 80 --out /tmp/small.json
  .venv/bin/python -u -m bench.small_docs_bench --docs 500 --no-latency --out /tmp/small500.json
  .venv/bin/python -u -m bench.small_docs_bench --docs 80 --http --out /tmp/small-http.json
  .venv/bin/python -u -m bench.small_docs_bench --docs 80 --http --archive 80 --out /tmp/small-zip.json

The server's arrangement in one process: the ingestion worker thread (as `make run` starts it), an
uploader thread posting short Chinese articles (bench/articles.py, 2–3 child chunks each) through the
document API one request per file (`--archive N`: zip archives of N files through the archive upload, as a
folder is uploaded), and — in the latency round — this thread sending one retrieval
query every 200 ms (`--probe-interval`) through the one-shot path. The throughput round runs without
queries: it is the pipeline against the embedder. Right before and right after it, the ingestion embedder alone (its own
process, every core) embeds the very texts the pipeline embedded, in full batches: the ratio of the
pipeline's rate to theirs is the figure, since other users of a shared machine move both alike — as
long as the load is steady, which the difference between the two timings shows; the share of the round
the embedder was busy is the figure that load drift cannot move. The round runs from the first upload
to the commit of the last document's status. Each stage's time is summed over the round (the stages
overlap: they run in different threads), per document; so is the CPU time spent outside the embedder,
which the embedder (lowest priority, a static OpenMP team) loses about one for one.

--http measures what a client of a running server sees: the server is a process of its own, started as `make run`
starts it (daphne, the ingestion worker inside), and the articles go to it over loopback HTTP with an API token,
one request each. This process only uploads, watches the database for the documents' statuses and times the
embedder alone (its own embedding process). The CPU outside the embedder is then the server process's (HTTP
server, ASGI adapter and middleware included, which the in-process client skips); stage times exist only in
process. Its latency round sends the probe questions to `POST /api/kb/retrieve/` with the same token, as a
client of the server would; their CPU time is then this process' (the request's), and the waiting is everything
else: the server's work, its queues and the loopback.
"""
from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import threading
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import requests

from bench.articles import article
from bench.common import arguments, cpu_seconds, percentile, setup_django, write_json
from kb.ingestion.chunker import retrieval_text
from tests.browser.live_server import LiveServer

QUERIES = ["年假需要提前几天申请", "差旅报销的期限是多少天", "会议室预订后多久不签到会被释放", "密码有什么要求",
           "供应商准入需要哪些材料", "客户投诉多久要响应", "内部推荐奖励多少钱", "忘记打卡怎么办"]
PROBE_INTERVAL = 0.2
# How often the round checks whether every document is finished. It only decides when to stop waiting: the
# round's length is read from the documents' own finishing times, so a slow check loses no accuracy, while a
# database query every 50 ms took ~1 CPU s per round from the embedder (nothing a real client does).
SETTLE_POLL = 0.5
_MISSING = object()


class StageClock:
    """Sums wall time and the calling thread's CPU time per named stage across threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.sizes: dict[str, list[int]] = defaultdict(list)  # len() of the first argument, for `sized` stages
        self.span: dict[str, tuple[float, float]] = {}  # epoch seconds: the first call's start, the last one's end
        self.wrapped: list[tuple[object, str, object]] = []

    def wrap(self, owner, attr: str, name: str, *, sized: bool = False) -> None:
        inner = getattr(owner, attr, None)
        if inner is None or getattr(inner, "_bench_wrapped", False):
            return
        self.wrapped.append((owner, attr, vars(owner).get(attr, _MISSING)))

        def timed(*args, **kwargs):
            start, cpu, began = time.perf_counter(), time.thread_time(), time.time()
            try:
                return inner(*args, **kwargs)
            finally:
                with self.lock:
                    self.span[name] = (self.span.get(name, (began, 0.0))[0], time.time())
                    self.seconds[name] += time.perf_counter() - start
                    self.cpu[name] += time.thread_time() - cpu
                    self.calls[name] += 1
                    if sized:
                        self.sizes[name].append(len(args[0]))

        timed._bench_wrapped = True
        setattr(owner, attr, timed)

    def restore(self) -> None:
        """Put every wrapped attribute back (the process lives on after a smoke run)."""
        for owner, attr, original in reversed(self.wrapped):
            if original is _MISSING:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)
        self.wrapped.clear()

    def reset(self) -> None:
        with self.lock:
            self.seconds.clear()
            self.cpu.clear()
            self.calls.clear()
            self.sizes.clear()
            self.span.clear()

    def report(self, documents: int) -> dict[str, dict[str, float]]:
        with self.lock:
            return {name: {"seconds": round(s, 3), "cpu_seconds": round(self.cpu[name], 3), "calls": self.calls[name],
                           "ms_per_document": round(1000 * s / max(1, documents), 1),
                           **({"sizes": list(self.sizes[name])} if name in self.sizes else {})}
                    for name, s in sorted(self.seconds.items(), key=lambda kv: -kv[1])}


def instrument(clock: StageClock) -> None:
    """Time every stage a document passes; names that do not exist in this version are skipped."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    import kb.domains
    import kb.ingestion.worker as worker
    import kb.services as services
    from docmind.backends import get_ingest_embedder
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.ingestion import pipeline
    from kb.ingestion.parsers import isolated

    clock.wrap(worker, "claim_next", "claim")
    clock.wrap(isolated.IsolatedParser, "__call__", "parse")
    clock.wrap(pipeline.DocumentIngester, "_store_chunks", "store_chunks")
    clock.wrap(pipeline.DocumentIngester, "prepare", "prepare (parse, store)")
    clock.wrap(pipeline.DocumentIngester, "index_lexical", "bm25_index")
    clock.wrap(pipeline.DocumentIngester, "store_vector_batch", "store_vectors")
    clock.wrap(services, "document_set_progress", "progress_writes")
    clock.wrap(services, "document_mark_ready", "mark_ready")
    clock.wrap(kb.domains, "on_document_ingested", "knowledge_map")
    clock.wrap(getattr(kb.domains, "DomainUpdates", None), "document_ready", "knowledge_map")
    clock.wrap(getattr(kb.domains, "DomainUpdates", None), "documents_ready", "knowledge_map")
    clock.wrap(getattr(kb.domains, "DomainUpdates", None), "flush", "knowledge_map")
    vectors, lexical = get_vector_store(), get_lexical_index()
    clock.wrap(vectors, "upsert", "vector_upsert")
    clock.wrap(vectors, "flush", "vector_flush")
    clock.wrap(vectors, "delete_documents", "vector_delete")
    clock.wrap(lexical, "add", "bm25_add")
    clock.wrap(lexical, "delete_documents", "bm25_delete")
    clock.wrap(get_ingest_embedder(), "embed_passages", "embed", sized=True)


class CpuClock:
    """CPU seconds spent during a round: the server process (this one, by thread in named groups, unless `server`
    is another process), and its child processes (the embedding process and the parser children). With the
    embedder at the lowest priority, every CPU second spent elsewhere on a 2-core machine is a second its OpenMP
    team waits for the core it was preempted on, so this, not the stage wall times, is what the ratio to the
    embedder alone loses."""

    def __init__(self, server: psutil.Process | None = None) -> None:
        self.process = server or psutil.Process()
        self.own = server is None
        self.start = self._sample()

    def _sample(self) -> tuple[float, dict[str, float], dict[str, float]]:
        by_group: dict[str, float] = defaultdict(float)
        if self.own:  # thread names are known only for this process' own threads
            names = {thread.native_id: thread.name for thread in threading.enumerate()}
            for thread in self.process.threads():
                by_group[_thread_group(names.get(thread.id, "other"))] += thread.user_time + thread.system_time
        children: dict[str, float] = defaultdict(float)
        for child in self.process.children(recursive=True):
            try:
                spent, command = cpu_seconds(child), " ".join(child.cmdline())
            except Exception:  # noqa: BLE001 - a child that ended meanwhile
                continue
            kind = ("embedder" if "embedding_child" in command else "parser" if "parsers.child" in command
                    else "other")
            children[kind] += spent
        return cpu_seconds(self.process), by_group, children

    def report(self, seconds: float, documents: int) -> dict:
        total0, groups0, children0 = self.start
        total, groups, children = self._sample()
        groups_spent = {name: round(value - groups0.get(name, 0.0), 2) for name, value in groups.items()}
        spent = {"server_process": round(total - total0, 2),
                 "server_threads": dict(sorted(((k, v) for k, v in groups_spent.items() if v >= 0.01),
                                               key=lambda kv: -kv[1])),
                 **{f"{kind}_process": round(value - children0.get(kind, 0.0), 2) for kind, value in children.items()}}
        outside = spent["server_process"] + sum(v for k, v in spent.items() if k in ("parser_process", "other_process"))
        spent["outside_embedder_ms_per_document"] = round(1000 * outside / max(1, documents), 1)
        spent["outside_embedder_share_of_round"] = round(outside / max(seconds, 1e-9) / (os.cpu_count() or 1), 3)
        return spent


def _thread_group(name: str) -> str:
    """A thread's name without its serial numbers: the threads of one pool count together."""
    return re.sub(r"[-_]?\d+", "", name) or "other"


def _summary(probes: list[tuple[float, float]]) -> dict[str, float]:
    """p50/p95 of the queries' wall time, of the CPU time their thread spent and of the difference (time the
    query waited: for the GIL, a lock, a core or I/O): when the waiting grows during ingestion, something held
    the query up; when the CPU time grows, the same work ran slower (caches and memory shared with the
    embedder)."""
    summary: dict[str, float] = {"queries": len(probes)}
    for key, values in (("", [wall for wall, _ in probes]), ("cpu_", [cpu for _, cpu in probes]),
                        ("waiting_", [wall - cpu for wall, cpu in probes])):
        summary[f"{key}p50_ms"] = round(statistics.median(values), 1) if values else 0.0
        summary[f"{key}p95_ms"] = round(percentile(values, 0.95), 1) if values else 0.0
    return summary


def _probe(retriever, *, until: Callable[[], bool], minimum: int,
           interval: float = PROBE_INTERVAL) -> list[tuple[float, float]]:
    """(wall ms, thread CPU ms) of one-shot retrievals sent every `interval` seconds."""
    probes: list[tuple[float, float]] = []
    next_at = time.perf_counter()
    i = 0
    while len(probes) < minimum or not until():
        time.sleep(max(0.0, next_at - time.perf_counter()))
        next_at += interval
        start, cpu = time.perf_counter(), time.thread_time()
        retriever.run(query=QUERIES[i % len(QUERIES)], top_k=5)
        probes.append(((time.perf_counter() - start) * 1000, (time.thread_time() - cpu) * 1000))
        i += 1
    return probes


def _client():
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(username="bench-admin", defaults={"is_superuser": True,
                                                                                        "is_staff": True})
    client = Client()
    client.force_login(user)
    return client


# A function that uploads one file: (file name, title, bytes, domain) → (HTTP status, the JSON answer or the start
# of the error's body).
Post = Callable[[str, str, bytes, str], tuple[int, object]]
# A function that uploads one zip archive: (bytes, domain) → (HTTP status, the JSON answer or the start of the error).
ArchivePost = Callable[[bytes, str], tuple[int, object]]


@dataclass
class Uploads:
    """The document API as this run reaches it: one file a request, or a zip archive of many."""

    file: Post
    archive: ArchivePost


def _answer(response) -> tuple[int, object]:
    """(HTTP status, the JSON answer or the start of the error's body) of a Django test or `requests` response."""
    return response.status_code, response.json() if response.status_code in (200, 202) else response.content[:200]


def _client_uploads(client) -> Uploads:
    """Uploads through Django's test client, in this process."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.core.files.uploadedfile import SimpleUploadedFile

    def post(name: str, title: str, data: bytes, domain: str) -> tuple[int, object]:
        return _answer(client.post("/api/kb/documents/", {"file": SimpleUploadedFile(name, data, "text/plain"),
                                                         "title": title, "domain": domain}))

    def archive(data: bytes, domain: str) -> tuple[int, object]:
        return _answer(client.post("/api/kb/documents/archive/", {
            "file": SimpleUploadedFile("articles.zip", data, "application/zip"), "domain": domain}))

    return Uploads(file=post, archive=archive)


def _http_uploads(url: str, token: str) -> Uploads:
    """Uploads over HTTP to a running server, with an API token, as a script of a team's would."""
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"

    def post(name: str, title: str, data: bytes, domain: str) -> tuple[int, object]:
        return _answer(session.post(f"{url}/api/kb/documents/", files={"file": (name, data, "text/plain")},
                                   data={"title": title, "domain": domain}, timeout=120))

    def archive(data: bytes, domain: str) -> tuple[int, object]:
        return _answer(session.post(f"{url}/api/kb/documents/archive/", data={"domain": domain}, timeout=300,
                                   files={"file": ("articles.zip", data, "application/zip")}))

    return Uploads(file=post, archive=archive)


class _HttpRetriever:
    """The latency round's probe over HTTP: one `POST /api/kb/retrieve/` a question, on a session of its own."""

    def __init__(self, url: str, token: str) -> None:
        self.url = f"{url}/api/kb/retrieve/"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def run(self, *, query: str, top_k: int = 5) -> dict:
        response = self.session.post(self.url, json={"query": query, "top_k": top_k}, timeout=60)
        response.raise_for_status()
        return response.json()


def _upload(uploads: Uploads, seeds: range, domain: str, ids: list[int], errors: list[str], cpu: list[float], *,
            per_archive: int = 0) -> None:
    """One request a file, or (`per_archive` > 0) zip archives of that many files, each named by its title (the
    archive upload's title is the entry's path) so that the children's texts are the same either way."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.db import close_old_connections

    start = time.thread_time()
    try:
        if per_archive <= 0:
            for seed in seeds:
                title, text = article(seed)
                status, answer = uploads.file(f"article-{seed}.txt", title, text.encode("utf-8"), domain)
                if status not in (200, 202):
                    errors.append(f"{status}: {answer!r}")
                else:
                    ids.append(answer["id"])
            return
        for first in range(0, len(seeds), per_archive):
            status, answer = uploads.archive(_zip_of(seeds[first:first + per_archive]), domain)
            if status != 202:
                errors.append(f"{status}: {answer!r}")
                continue
            errors.extend(f"{refused['path']}: {refused['reason']}" for refused in answer["refused"])
            ids.extend(entry["document"]["id"] for entry in answer["accepted"])
    finally:
        close_old_connections()
        cpu.append(time.thread_time() - start)


def _zip_of(seeds: range) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        names: set[str] = set()
        for seed in seeds:
            title, text = article(seed)
            name = f"{title}.txt" if f"{title}.txt" not in names else f"{title}-{seed}.txt"
            names.add(name)
            archive.writestr(name, text.encode("utf-8"))
    return buffer.getvalue()


def _settled(ids_expected: int, ids: list[int], domain: str) -> bool:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from kb.models import Document, DocumentStatus

    # By the round's own domain rather than its ids: the same answer, without a 500-id IN list every poll.
    return len(ids) >= ids_expected and not Document.objects.filter(
        domain=domain, status__in=[DocumentStatus.PENDING, DocumentStatus.PROCESSING]).exists()


def _embedded_texts(ids: list[int]) -> list[str]:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from kb.models import Chunk, ChunkLevel

    return [retrieval_text(context, content) for context, content in
            Chunk.objects.filter(level=ChunkLevel.CHILD, document_id__in=ids).order_by("id")
            .values_list("context", "content")]


def ingest_round(uploads: Uploads, seeds: range, domain: str, *, retriever=None,
                 server: psutil.Process | None = None, interval: float = PROBE_INTERVAL, per_archive: int = 0) -> dict:
    """Upload `seeds` one by one while the worker runs (in this process, or in `server`); returns when every
    document is ready or failed."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.db.models import Count, Max
    from django.utils import timezone

    from kb.models import Document, DocumentStatus

    ids: list[int] = []
    errors: list[str] = []
    upload_cpu: list[float] = []
    cpu = CpuClock(server)
    started = timezone.now()
    uploader = threading.Thread(target=_upload, args=(uploads, seeds, domain, ids, errors, upload_cpu),
                                kwargs={"per_archive": per_archive}, name="bench-uploader", daemon=True)
    uploader.start()
    latencies: list[tuple[float, float]] = []
    if retriever is not None:
        latencies = _probe(retriever, until=lambda: _settled(len(seeds), ids, domain) and not uploader.is_alive(),
                           minimum=1, interval=interval)
    while uploader.is_alive() or not _settled(len(seeds) - len(errors), ids, domain):
        time.sleep(SETTLE_POLL)
    uploader.join()
    # From the round's start to the commit of the last document's final status (ready or failed rows are not
    # written again by ingestion; the knowledge map's profile write does not touch updated_at).
    finished = Document.objects.filter(pk__in=ids).aggregate(last=Max("updated_at"))["last"] or timezone.now()
    seconds = (finished - started).total_seconds()
    spent = cpu.report(seconds, len(ids))
    # In process the uploader's CPU is the server's (included above); over HTTP it is the client's (not included).
    spent["uploads" if server is None else "client_uploads"] = round(sum(upload_cpu), 2)
    statuses = dict(Document.objects.filter(pk__in=ids).values_list("status").annotate(n=Count("id"))
                    .values_list("status", "n"))
    texts = _embedded_texts(ids)
    return {"documents": len(ids), "upload_errors": errors[:5], "statuses": statuses, "child_chunks": len(texts),
            "seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 2),
            "documents_per_s": round(len(ids) / seconds, 2), "texts": texts, "latencies": latencies,
            "ready": statuses.get(DocumentStatus.READY, 0), "cpu_seconds": spent,
            "span": (started.timestamp(), finished.timestamp()),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def _expected_texts(seeds: range) -> list[str]:
    """The children's texts the pipeline will embed for these articles, by the same parser and chunker, so that
    the embedder alone can be timed on them before the round as well as after it."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from config_admin.conf import ai_config
    from kb.ingestion.chunker import TextChunker
    from kb.ingestion.parsers import parse_located

    snap = ai_config.snapshot()
    chunker = TextChunker(parent_chars=snap["chunk.parent_chars"], child_chars=snap["chunk.child_chars"])
    texts = []
    for seed in seeds:
        title, text = article(seed)
        for parent in chunker.split(parse_located(text.encode("utf-8"), "txt").text, title=title):
            texts.extend(retrieval_text(parent.context, child.content) for child in parent.children)
    return texts


def embed_alone(texts: list[str]) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.backends import get_ingest_embedder
    from kb.ingestion.pipeline import BATCH_SIZE

    embedder = get_ingest_embedder()
    child = psutil.Process(embedder.status()["pid"]) if hasattr(embedder, "status") else None
    cpu = cpu_seconds(child) if child else 0.0
    start = time.perf_counter()
    for i in range(0, len(texts), BATCH_SIZE):
        embedder.embed_passages(texts[i:i + BATCH_SIZE])
    seconds = time.perf_counter() - start
    spent = {"cpu_seconds": round(cpu_seconds(child) - cpu, 2)} if child else {}
    return {"seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 2), "batch": BATCH_SIZE,
            **spent, "load_average": [round(x, 2) for x in os.getloadavg()]}



def parse_only(docs: int) -> dict:
    """The parse stage alone, as the worker runs it (IsolatedParser with the server's limits), on the articles."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from kb.ingestion.parsers.isolated import IsolatedParser

    parser = IsolatedParser()
    texts = [article(seed)[1].encode("utf-8") for seed in range(docs)]
    start = time.perf_counter()
    for data in texts:
        parser(data, "txt")
    seconds = time.perf_counter() - start
    return {"documents": docs, "seconds": round(seconds, 2), "ms_per_document": round(1000 * seconds / docs, 1)}


@contextmanager
def _server_in_process() -> Iterator[tuple[Uploads, None, None]]:
    """The ingestion worker in a thread of this process, as the server runs it; uploads through the test client."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.conf import settings

    from kb.ingestion.wakeup import wake_worker
    from kb.ingestion.worker import run_worker
    from kb.search import get_searcher

    get_searcher()
    stop = threading.Event()
    worker = threading.Thread(target=run_worker, name="docmind-ingest", daemon=True,
                              kwargs={"stop": stop, "sole_worker": True, "poll_seconds": settings.INGEST_POLL_SECONDS})
    worker.start()
    try:
        yield _client_uploads(_client()), None, None
    finally:
        stop.set()
        wake_worker()
        worker.join(timeout=30)


@contextmanager
def _server_over_http() -> Iterator[tuple[Uploads, psutil.Process, _HttpRetriever]]:
    """A server process over this run's data dir, started as `make run` starts it (daphne, the ingestion worker
    inside); uploads over loopback HTTP with an administrator's API token."""
    staff = {"username": "bench-admin", "password": "bench-admin-pass-123"}
    # The server's database is this process' (it reads the documents' statuses there), and so is its cache.
    shared = {name: os.environ[name] for name in ("DATABASE_URL", "REDIS_URL") if name in os.environ}
    live = LiveServer(data_dir=Path(os.environ["DOCMIND_DATA_DIR"]), ingest_worker=True, extra_env=shared)
    live.prepare(staff=staff)
    live.start()
    try:
        answer = requests.post(f"{live.url}/api/auth/token/", json=staff, timeout=60)
        answer.raise_for_status()
        token = answer.json()["token"]
        yield _http_uploads(live.url, token), psutil.Process(live.process.pid), _HttpRetriever(live.url, token)
    finally:
        live.stop()


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--docs", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0, help="first article seed")
    parser.add_argument("--no-latency", action="store_true", help="skip the round with queries")
    parser.add_argument("--no-throughput", action="store_true", help="skip the round without queries")
    parser.add_argument("--idle-queries", type=int, default=50)
    parser.add_argument("--probe-interval", type=float, default=PROBE_INTERVAL,
                        help="seconds between the latency round's queries (shorter: more queries behind its p95)")
    parser.add_argument("--warm-up", type=int, default=12, help="documents ingested before the timed rounds")
    parser.add_argument("--parse-only", action="store_true", help="time the parse stage alone on --docs articles")
    parser.add_argument("--archive", type=int, default=0, metavar="N",
                        help="upload the rounds' articles as zip archives of N files (POST /api/kb/documents/archive/)")
    parser.add_argument("--http", action="store_true",
                        help="a server process of its own, uploads and the latency round's questions over HTTP")
    args = parser.parse_args(argv)
    if args.smoke:
        args.docs, args.warm_up, args.no_latency = 2, 1, True
    if args.parse_only:
        write_json({"parse_only": parse_only(args.docs)}, args.out)
        return
    setup_django(offline=False)  # in process the bench starts the ingestion worker itself, as the server does

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.backends import get_ingest_embedder

    get_ingest_embedder().embed_passages(["warm-up"])
    clock = StageClock()
    with (_server_over_http() if args.http else _server_in_process()) as (uploads, server, http_retriever):
        # Something to retrieve from, and every lazy start-up (parser, stores, models) out of the timed rounds.
        base = ingest_round(uploads, range(10_000, 10_000 + args.warm_up), "bench-base", server=server)
        if server is None:
            instrument(clock)
        try:
            result = _rounds(args, uploads, server, clock, base, http_retriever)
        finally:
            clock.restore()
    write_json(result, args.out)


def _rounds(args: argparse.Namespace, uploads: Uploads, server: psutil.Process | None, clock: StageClock,
            base: dict, http_retriever: _HttpRetriever | None) -> dict:
    """The throughput round (no queries) and the latency round (queries every PROBE_INTERVAL), each between two
    timings of the embedder alone on its texts."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_reranker
    from kb.retrieval.compose import retrieval_params
    from kb.retrieval.pipeline import OneShotRetriever
    from kb.search import get_searcher

    result: dict = {"docs": args.docs, "server": "over HTTP" if server else "in process",
                    "uploads": f"zip archives of {args.archive} files" if args.archive > 0 else "one file a request",
                    "warm_up": {k: base[k] for k in ("documents", "child_chunks", "seconds")}}
    rounds = [] if args.no_throughput else [("throughput", None)]
    if not args.no_latency:
        # apps not ready: the project loads only after setup_django() has set up this run's Django
        from kb.access import kb_default

        retriever = http_retriever or OneShotRetriever(
            searcher=get_searcher().scoped([kb_default().pk]), embedder=get_embedder(), reranker=get_reranker(),
            params=retrieval_params(ai_config.snapshot()))
        # Each probe question once, so that no idle probe pays for embedding a question the probes during
        # ingestion find in the query cache (that made the idle p95 the slower one).
        for query in QUERIES:
            retriever.run(query=query)
        rounds.append(("latency", retriever))
    for number, (name, retriever) in enumerate(rounds):
        first = args.seed + number * 100_000
        expected = _expected_texts(range(first, first + args.docs))
        before = embed_alone(expected)
        idle = (_probe(retriever, until=lambda: True, minimum=args.idle_queries, interval=args.probe_interval)
                if retriever else [])
        clock.reset()
        run = ingest_round(uploads, range(first, first + args.docs), f"bench-{name}", retriever=retriever,
                           server=server, interval=args.probe_interval, per_archive=args.archive)
        stages, spans = clock.report(run["documents"]), dict(clock.span)
        texts = run.pop("texts")
        after = embed_alone(texts)
        # The embedder alone is timed just before and just after the round on the same texts: their mean is the
        # baseline, and their difference is how far the machine's load drifted meanwhile (the ratio means
        # little when it is large; repeat the run).
        same = sorted(expected) == sorted(texts)
        alone_seconds = (before["seconds"] + after["seconds"]) / 2 if same else after["seconds"]
        alone = {**after, "seconds": round(alone_seconds, 2), "chunks_per_s": round(len(texts) / alone_seconds, 2),
                 "before": before if same else "not the texts the pipeline embedded", "after": after,
                 "drift": round(abs(before["seconds"] - after["seconds"]) / alone_seconds, 3) if same else None}
        during = run.pop("latencies")
        # The share of the round the embedder was working: immune to the machine's load drifting between the
        # round and the embedder-alone measurement (1.0: the pipeline ran at the embedder's speed).
        busy = round(stages["embed"]["seconds"] / run["seconds"], 3) if "embed" in stages else None
        entry = {**run, "embedder_alone": alone, "ratio": round(run["chunks_per_s"] / alone["chunks_per_s"], 3),
                 "embedder_busy": busy, "stages": stages}
        # What the round holds that the embedder alone does not: from the first upload to the first embedding
        # call, and from the end of the last one to the last document's status committed.
        round_start, round_end = entry.pop("span")
        if "embed" in spans:
            embed_start, embed_end = spans["embed"]
            entry["before_first_embedding_s"] = round(embed_start - round_start, 3)
            entry["after_last_embedding_s"] = round(round_end - embed_end, 3)
        if retriever is not None:
            idle_after = _probe(retriever, until=lambda: True, minimum=args.idle_queries, interval=args.probe_interval)
            idle_all = idle + idle_after
            entry["queries"] = {"idle": _summary(idle_all), "during_ingestion": _summary(during)}
            entry["queries"]["p95_ratio"] = round(percentile([wall for wall, _ in during], 0.95)
                                                  / percentile([wall for wall, _ in idle_all], 0.95), 2)
        result[name] = entry
        if "cpu_seconds" in alone and run["cpu_seconds"].get("embedder_process"):
            # The embedder's CPU for the same texts in the round and alone: above 1, the round's embedding calls
            # cost more work (smaller or emptier batches, caches shared with the server), not only fewer cores.
            alone_cpu = (before["cpu_seconds"] + after["cpu_seconds"]) / 2 if same else after["cpu_seconds"]
            entry["embedder_cpu_round_over_alone"] = round(run["cpu_seconds"]["embedder_process"] / alone_cpu, 3)
        print(f"{name}: {run['documents']} documents, {run['child_chunks']} child chunks in {run['seconds']} s "
              f"= {run['chunks_per_s']} chunks/s; embedder alone {alone['chunks_per_s']} chunks/s "
              f"(before / after the round {before['seconds']} / {after['seconds']} s, drift {alone['drift']}); "
              f"ratio {entry['ratio']} (target >= 0.9); embedder busy {busy} of the round; statuses {run['statuses']}")
        if "queries" in entry:
            q = entry["queries"]
            idle_q, during_q = q["idle"], q["during_ingestion"]
            print(f"  queries idle p95 {idle_q['p95_ms']} ms, during ingestion p95 {during_q['p95_ms']} ms: "
                  f"{q['p95_ratio']} (target <= 1.5); CPU p50 / p95 idle {idle_q['cpu_p50_ms']} / "
                  f"{idle_q['cpu_p95_ms']} ms, during {during_q['cpu_p50_ms']} / {during_q['cpu_p95_ms']} ms; "
                  f"waiting p95 idle {idle_q['waiting_p95_ms']} ms, during {during_q['waiting_p95_ms']} ms")
        cpu = run["cpu_seconds"]
        print(f"  load average {run['load_average']}; CPU s: server process {cpu['server_process']} "
              f"({cpu['server_threads']}), embedder {cpu.get('embedder_process')}, parser {cpu.get('parser_process')}; "
              f"outside the embedder {cpu['outside_embedder_ms_per_document']} ms/document, "
              f"{cpu['outside_embedder_share_of_round']} of the machine")
        print(f"  embedder CPU, round / alone: {entry.get('embedder_cpu_round_over_alone')}; "
              f"embedding batches {stages.get('embed', {}).get('sizes')} (alone: {alone['batch']} a call); "
              f"{entry.get('before_first_embedding_s')} s before the first, {entry.get('after_last_embedding_s')} s "
              f"after the last")
        for stage, figures in stages.items():
            print(f"  {stage:24s} {figures['seconds']:8.2f} s  {figures['cpu_seconds']:6.2f} CPU s  "
                  f"{figures['calls']:5d} calls  {figures['ms_per_document']:7.1f} ms/document")
        # After each round, so that a long run interrupted later keeps what it measured.
        write_json(result, args.out, echo=False)
    return result

if __name__ == "__main__":
    main()
