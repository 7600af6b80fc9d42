"""Shapes of the evaluation API (one serializer per shape, snake_case on the wire)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from docmind.fields import NameField, TextField
from evals.engine import run_metrics
from evals.models import EvalItem, EvalResult, EvalRun, EvalSet, RunStatus


class AnswersField(serializers.ListField):
    """Alternatives, each a list of texts that must all appear in the answer."""

    child = serializers.ListField(child=serializers.CharField())


class ItemSerializer(serializers.ModelSerializer):
    question = TextField(max_length=2000)
    category = NameField(max_length=64, required=False, default="general")
    answers = AnswersField(required=False, default=list)
    documents = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                      help_text="Titles (or file names) of documents of the set's base.")
    history = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                    help_text="Earlier questions of the same conversation, asked first.")

    class Meta:
        model = EvalItem
        fields = ["id", "question", "answers", "documents", "category", "history"]
        read_only_fields = ["id"]


class ItemFromAnswer(serializers.Serializer):
    message = serializers.IntegerField(help_text="An answer in one of the caller's own conversations.")
    set = serializers.IntegerField(required=False, allow_null=True, default=None,
                                   help_text="The set to add to; absent or null: the default set of the base the "
                                             "answer's first cited document (else the turn's base) belongs to.")
    answers = AnswersField(required=False, default=list,
                           help_text="Expected answers: alternatives, each a list of texts that must all appear.")


class SetRef(serializers.ModelSerializer):
    class Meta:
        model = EvalSet
        fields = ["id", "name", "kb"]
        read_only_fields = fields


class ItemAdded(serializers.Serializer):
    set = SetRef(read_only=True)
    item = ItemSerializer(read_only=True)


class SetWrite(serializers.Serializer):
    name = NameField(max_length=128)
    kb = serializers.IntegerField(help_text="The knowledge base the set's questions are asked of.")
    description = TextField(required=False, allow_blank=True, default="")
    items = serializers.ListField(child=serializers.DictField(), help_text="Items as in `EvalItem`.")


class SetUpload(serializers.Serializer):
    name = NameField(max_length=128)
    kb = serializers.IntegerField()
    description = TextField(required=False, allow_blank=True, default="")
    file = serializers.FileField(help_text="JSON, JSON lines, CSV or XLSX (see the template).")


class LastRun(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    answer_hit = serializers.FloatField(allow_null=True)


class SetSerializer(serializers.ModelSerializer):
    kb_name = serializers.CharField(source="kb.name", read_only=True)
    item_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = EvalSet
        fields = ["id", "name", "kb", "kb_name", "description", "item_count", "created_at", "updated_at"]
        read_only_fields = fields


class SetDetailSerializer(SetSerializer):
    items = ItemSerializer(many=True, read_only=True)

    class Meta(SetSerializer.Meta):
        fields = [*SetSerializer.Meta.fields, "items"]
        read_only_fields = fields


class RunCreate(serializers.Serializer):
    set = serializers.IntegerField()


class Metrics(serializers.Serializer):
    n = serializers.IntegerField()
    recall_at_5 = serializers.FloatField(allow_null=True, help_text="Share of the expected documents among the "
                                                                    "first five retrieved (answerable items).")
    mrr = serializers.FloatField(allow_null=True, help_text="Mean reciprocal rank of the first expected document.")
    answer_hit = serializers.FloatField(allow_null=True)
    cites_expected = serializers.FloatField(allow_null=True)
    flagged = serializers.FloatField(allow_null=True, help_text="Share of answers flagged as not found or "
                                                                "low confidence.")
    wrong_unflagged = serializers.FloatField(allow_null=True)
    false_not_found = serializers.FloatField(allow_null=True)
    p50_ms = serializers.FloatField(allow_null=True)
    p95_ms = serializers.FloatField(allow_null=True)
    errors = serializers.IntegerField()


class BandReliability(serializers.Serializer):
    n = serializers.IntegerField()
    right = serializers.FloatField(allow_null=True)


class RunMetrics(Metrics):
    categories = serializers.DictField(child=Metrics())
    reliability = serializers.DictField(child=BandReliability(), help_text="Share right per confidence band.")


class ResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = EvalResult
        fields = ["id", "item", "question", "category", "answer", "retrieved", "cited", "band", "confidence",
                  "flagged", "hit", "cites_expected", "recall_at_5", "reciprocal_rank", "wrong_unflagged",
                  "latency_ms", "error"]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer):
    set = serializers.IntegerField(source="eval_set_id", read_only=True)
    progress = serializers.IntegerField(read_only=True, help_text="Percent of the items answered.")
    metrics = serializers.SerializerMethodField()

    class Meta:
        model = EvalRun
        fields = ["id", "set", "status", "progress", "done", "total", "metrics", "error", "created_at",
                  "started_at", "finished_at"]
        read_only_fields = fields

    @extend_schema_field(RunMetrics)
    def get_metrics(self, run: EvalRun) -> dict:
        # A run in progress shows the metrics of the items answered so far.
        return run.metrics if run.finished and run.metrics else run_metrics(run)


class RunDetailSerializer(RunSerializer):
    config = serializers.DictField(read_only=True, help_text="The AI configuration the run ran under.")
    results_count = serializers.SerializerMethodField(help_text="Results matching the filter, of which `results` "
                                                                "holds those from `offset` on, up to `limit`.")
    results = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "config", "results_count", "results"]
        read_only_fields = fields

    def _results(self, run: EvalRun):
        results = run.results.all()
        if self.context.get("failures"):
            results = results.exclude(hit=True, error="")
        return results

    def get_results_count(self, run: EvalRun) -> int:
        return self._results(run).count()

    @extend_schema_field(ResultSerializer(many=True))
    def get_results(self, run: EvalRun) -> list:
        offset, limit = self.context.get("offset", 0), self.context.get("limit", 500)
        return ResultSerializer(self._results(run)[offset:offset + limit], many=True).data
