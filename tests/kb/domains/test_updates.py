"""DomainUpdates: each document profiled when ready, each touched domain aggregated once per interval and at the end;
BackgroundDomainUpdates: the same work in a thread of its own, so that a slow profile holds nobody up."""
import threading
import time
from types import SimpleNamespace

from kb.domains import BackgroundDomainUpdates, DomainUpdates


class RecordingService:
    def __init__(self) -> None:
        self.profiled: list[int] = []
        self.calls: list[list[int]] = []  # the documents of each profile_documents call
        self.aggregated: list[tuple[int, str]] = []

    def profile_documents(self, documents) -> list:
        """As KnowledgeDomainService does: a document whose profile fails does not stop the others."""
        self.calls.append([document.pk for document in documents])
        failed = []
        for document in documents:
            try:
                self.profile_document(document)
            except RuntimeError:
                failed.append(document)
        return failed

    def profile_document(self, document) -> None:
        self.profiled.append(document.pk)

    def on_document_change(self, domain_id: str, *, kb_id: int) -> None:
        self.aggregated.append((kb_id, domain_id))


class FirstProfileFails(RecordingService):
    """Profiling document 1 fails, as a model that is down would."""

    def profile_document(self, document) -> None:
        if document.pk == 1:
            raise RuntimeError("model down")
        super().profile_document(document)


def _doc(pk: int, domain: str, kb_id: int = 1):
    return SimpleNamespace(pk=pk, domain=domain, kb_id=kb_id)


def test_a_folder_of_pages_aggregates_each_domain_once_not_once_per_page():
    service = RecordingService()
    updates = DomainUpdates(every=30, clock=lambda: 0.0, service=service)
    for pk in range(50):
        updates.documents_ready([_doc(pk, "hr" if pk % 2 else "finance")])
    assert service.profiled == list(range(50))
    assert service.aggregated == []
    updates.flush()
    assert sorted(service.aggregated) == [(1, "finance"), (1, "hr")]
    updates.flush()
    assert len(service.aggregated) == 2  # nothing new since


def test_a_long_ingestion_refreshes_its_domains_every_interval():
    service = RecordingService()
    now = [0.0]
    updates = DomainUpdates(every=30, clock=lambda: now[0], service=service)
    updates.documents_ready([_doc(1, "hr")])
    now[0] = 31.0
    updates.documents_ready([_doc(2, "hr")])
    assert service.aggregated == [(1, "hr")]
    updates.documents_ready([_doc(3, "hr", kb_id=2)])
    updates.flush()
    assert service.aggregated == [(1, "hr"), (2, "hr")]


def test_a_failing_profile_or_aggregation_never_stops_the_others():
    class Failing(FirstProfileFails):
        def on_document_change(self, domain_id: str, *, kb_id: int) -> None:
            if domain_id == "bad":
                raise RuntimeError("model down")
            super().on_document_change(domain_id, kb_id=kb_id)

    service = Failing()
    updates = DomainUpdates(clock=lambda: 0.0, service=service)
    for pk, domain in ((1, "bad"), (2, "good")):
        updates.documents_ready([_doc(pk, domain)])
    updates.flush()
    assert service.profiled == [2] and service.aggregated == [(1, "good")]


class GatedService(RecordingService):
    """Each profile waits for `gate`, as a call to a slow model would."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def profile_document(self, document) -> None:
        self.gate.wait(20)
        super().profile_document(document)


def test_documents_queued_for_the_background_map_do_not_wait_for_their_profiles():
    service = GatedService()
    updates = BackgroundDomainUpdates(DomainUpdates(clock=lambda: 0.0, service=service))
    for pk in range(5):
        updates.documents_ready([_doc(pk, "hr")])
    updates.flush()
    # Had a call waited for its profile, the gate's 20 s would have passed and a profile would be recorded.
    assert service.profiled == []

    service.gate.set()
    assert updates.close(timeout=20)
    assert service.profiled == list(range(5))
    assert service.aggregated == [(1, "hr")]


def test_documents_queued_while_one_is_profiled_are_profiled_together_next():
    service = GatedService()
    updates = BackgroundDomainUpdates(DomainUpdates(clock=lambda: 0.0, service=service))
    updates.documents_ready([_doc(0, "hr")])
    deadline = time.monotonic() + 20
    while not service.calls and time.monotonic() < deadline:  # the thread is waiting in the first profile
        time.sleep(0.01)
    for pk in range(1, 5):
        updates.documents_ready([_doc(pk, "hr")])
    updates.flush()
    updates.documents_ready([_doc(5, "finance")])
    service.gate.set()
    assert updates.close(timeout=20)
    # the flush queued between them is served in its place: after the documents before it, before the one after
    assert service.calls == [[0], [1, 2, 3, 4], [5]]
    assert service.aggregated == [(1, "hr"), (1, "finance")]


def test_closing_the_background_map_gives_up_after_its_timeout():
    service = GatedService()
    updates = BackgroundDomainUpdates(DomainUpdates(clock=lambda: 0.0, service=service))
    updates.documents_ready([_doc(1, "hr")])
    assert updates.close(timeout=0.2) is False
    service.gate.set()  # the abandoned thread finishes on its own


def test_a_failing_profile_does_not_stop_the_background_map():
    service = FirstProfileFails()
    updates = BackgroundDomainUpdates(DomainUpdates(clock=lambda: 0.0, service=service))
    for pk in (1, 2):
        updates.documents_ready([_doc(pk, "hr")])
    assert updates.close(timeout=20)
    assert service.profiled == [2] and service.aggregated == [(1, "hr")]


def test_the_background_map_waits_while_a_question_is_answered():
    from docmind.foreground import foreground

    service = GatedService()
    service.gate.set()
    updates = BackgroundDomainUpdates(DomainUpdates(clock=lambda: 0.0, service=service))
    with foreground():
        updates.documents_ready([_doc(1, "hr")])
        time.sleep(0.1)  # within the foreground's bound: the thread is still giving way
        assert service.profiled == []
    assert updates.close(timeout=20)
    assert service.profiled == [1]
