"""Staff pages of the evaluation app (/eval/): sets, a run's progress and results, charts and comparisons.

Server-rendered forms over the same services as the API; only staff and editors of a set's base see it.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied

from evals import access, services
from evals.charts import SERIES, metrics_chart
from evals.compare import config_diff, flipped, metric_deltas
from evals.engine import run_metrics
from evals.importing import ImportFailed, parse_file
from evals.models import RunStatus
from kb.access import editable_kbs, is_kb_editor

METRIC_LABELS = {"answer_hit": gettext_lazy("answer hit"), "recall_at_5": gettext_lazy("recall@5"),
                 "mrr": gettext_lazy("MRR"), "cites_expected": gettext_lazy("cites expected"),
                 "flagged": gettext_lazy("flagged"), "wrong_unflagged": gettext_lazy("wrong and unflagged"),
                 "p50_ms": gettext_lazy("p50 latency (ms)"), "p95_ms": gettext_lazy("p95 latency (ms)")}


# Errors listed one per message on a page; beyond them the page says how many more there are.
SHOWN_ERRORS = 20


def _staff(view):
    """Signed in, and an editor of at least one base (administrators edit all)."""
    @login_required
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not is_kb_editor(request.user):
            raise PermissionDenied
        try:
            return view(request, *args, **kwargs)
        except ApiPermissionDenied:
            raise PermissionDenied from None

    return wrapped


def _errors(request: HttpRequest, exc: Exception) -> None:
    if isinstance(exc, ImportFailed):
        for error in exc.errors[:SHOWN_ERRORS]:
            messages.error(request, error.as_text())
        if len(exc.errors) > SHOWN_ERRORS:
            more = len(exc.errors) - SHOWN_ERRORS
            messages.error(request, ngettext("…and %(n)s more error; nothing was imported.",
                                             "…and %(n)s more errors; nothing was imported.", more) % {"n": more})
    else:
        messages.error(request, str(exc))


@_staff
def index(request: HttpRequest) -> HttpResponse:
    kbs = editable_kbs(request.user)
    if request.method == "POST":
        kb = kbs.filter(pk=request.POST.get("kb") or 0).first()
        upload = request.FILES.get("file")
        if kb is None or upload is None:
            messages.error(request, _("Choose a knowledge base and a file."))
        else:
            try:
                items = parse_file(upload.name or "", upload.read())
                eval_set = services.eval_set_create(kb=kb, name=request.POST.get("name", ""), items=items,
                                                    created_by=request.user)
            except (ImportFailed, services.EvalError) as exc:
                _errors(request, exc)
            else:
                messages.success(request, _("Imported %(n)s items.") % {"n": len(items)})
                return redirect("evals:set", pk=eval_set.pk)
    sets = access.sets_for(request.user).annotate(item_count=Count("items", distinct=True))
    return render(request, "evals/index.html", {"sets": sets, "kbs": kbs})


def _item_fields(request: HttpRequest) -> dict:
    def lines(name: str) -> list[str]:
        return [line.strip() for line in request.POST.get(name, "").splitlines() if line.strip()]

    return {"question": request.POST.get("question", ""),
            "answers": [[p.strip() for p in line.split("&&") if p.strip()] for line in lines("answers")],
            "documents": lines("documents"), "category": request.POST.get("category", "").strip() or "general",
            "history": lines("history")}


@_staff
def set_detail(request: HttpRequest, pk: int) -> HttpResponse:
    eval_set = access.editable_set(request.user, pk)
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "add":
                services.add_item(eval_set, **_item_fields(request))
                messages.success(request, _("Item added."))
            elif action == "import":
                upload = request.FILES.get("file")
                if upload is None:
                    messages.error(request, _("Choose a file."))
                else:
                    added = services.items_append(eval_set=eval_set, items=parse_file(upload.name or "",
                                                                                      upload.read()))
                    messages.success(request, _("Imported %(n)s items.") % {"n": len(added)})
            elif action == "delete-item":
                item = eval_set.items.filter(pk=request.POST.get("item") or 0).first()
                if item is not None:
                    services.item_delete(item=item)
            elif action == "run":
                run = services.run_start(eval_set=eval_set, started_by=request.user)
                return redirect("evals:run", pk=run.pk)
            elif action == "delete-set":
                services.eval_set_delete(eval_set=eval_set)
                messages.success(request, _("Set deleted."))
                return redirect("evals:index")
        except (ImportFailed, services.EvalError) as exc:
            _errors(request, exc)
        return redirect("evals:set", pk=eval_set.pk)
    runs = list(eval_set.runs.all()[:50])
    finished = [r for r in reversed(runs) if r.status == RunStatus.SUCCEEDED and r.metrics]
    labels = {key: str(METRIC_LABELS[key]) for key, _colour in SERIES}
    chart = metrics_chart([(f"#{r.pk}", r.metrics) for r in finished], labels, _("Metrics over runs")) \
        if finished else None
    return render(request, "evals/set.html", {"set": eval_set, "items": eval_set.items.all()[:1000],
                                              "item_count": eval_set.items.count(), "runs": runs, "chart": chart})


@_staff
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = access.editable_run(request.user, pk)
    if request.method == "POST":
        if request.POST.get("action") == "cancel":
            services.run_cancel(run=run)
        elif request.POST.get("action") == "delete":
            set_pk = run.eval_set_id
            services.run_delete(run=run)
            return redirect("evals:set", pk=set_pk)
        return redirect("evals:run", pk=run.pk)
    failures = request.GET.get("failures") == "1"
    results = run.results.all()
    if failures:
        results = results.exclude(hit=True, error="")
    metrics = run.metrics if run.finished and run.metrics else run_metrics(run)
    rows = [(str(METRIC_LABELS[k]), metrics.get(k)) for k in METRIC_LABELS]
    categories = [(name, [stats.get(k) for k in METRIC_LABELS])
                  for name, stats in metrics.get("categories", {}).items()]
    return render(request, "evals/run.html", {
        "run": run, "results": results[:2000], "failures": failures, "metric_rows": rows,
        "metric_names": [str(v) for v in METRIC_LABELS.values()], "categories": categories,
        "reliability": sorted(metrics.get("reliability", {}).items()), "refresh": not run.finished})


@_staff
def compare(request: HttpRequest) -> HttpResponse:
    try:
        a = access.editable_run(request.user, request.GET.get("a", ""))
        b = access.editable_run(request.user, request.GET.get("b", ""))
    except Http404:
        messages.error(request, _("Choose two runs to compare."))
        return redirect("evals:index")
    if a.created_at > b.created_at:
        a, b = b, a
    flips = flipped(a, b)
    deltas = [(str(METRIC_LABELS[k]), va, vb, d) for k, va, vb, d in metric_deltas(a, b)]
    return render(request, "evals/compare.html", {"a": a, "b": b, "flips": flips, "deltas": deltas,
                                                  "config": config_diff(a, b),
                                                  "fixed": sum(f.fixed for f in flips),
                                                  "broken": sum(not f.fixed for f in flips)})
