"""The router's labelled set and evaluation runs in the Django admin.

Labelled queries are edited here (`train_router --include-db` trains on them); evaluations
are written by `evaluate_router` only, so they are read-only.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.answers.models import LabelledQuery, RouterEvaluation
from apps.answers.routing.types import Intent, Tier
from ragplatform.admin_base import ReadOnlyAdmin


class LabelledQueryForm(forms.ModelForm[LabelledQuery]):
    # The database only accepts the router's vocabulary; offer exactly that.
    intent = forms.ChoiceField(choices=[(str(i), str(i)) for i in Intent])
    tier = forms.ChoiceField(choices=[(str(t), str(t)) for t in Tier])

    class Meta:
        model = LabelledQuery
        fields = ["text", "intent", "tier", "language", "split"]


@admin.register(LabelledQuery)
class LabelledQueryAdmin(admin.ModelAdmin[LabelledQuery]):
    form = LabelledQueryForm
    list_display = ["short_text", "intent", "tier", "language", "split", "created_at"]
    list_filter = ["intent", "tier", "language", "split"]
    search_fields = ["text"]

    @admin.display(description="text", ordering="text")
    def short_text(self, query: LabelledQuery) -> str:
        return Truncator(query.text).chars(100)


# --- Evaluation runs -------------------------------------------------------------------------


def confusion_table(report: dict[str, Any]) -> SafeString:
    """Rows are gold labels, columns predicted ones; the diagonal is what the router got right."""
    labels = [str(label) for label in report.get("labels") or []]
    matrix = report.get("confusion") or []
    if not labels or len(matrix) != len(labels):
        return format_html("{}", "No confusion matrix in this report.")
    biggest = max((max(row, default=0) for row in matrix), default=0) or 1

    def cell(i: int, j: int, value: int) -> SafeString:
        colour = "21,128,61" if i == j else "185,28,28"
        alpha = 0.08 + 0.6 * value / biggest if value else 0
        return format_html(
            '<td class="numeric" style="background:rgba({},{})">{}</td>',
            colour,
            f"{alpha:.2f}",
            value,
        )

    head = format_html_join("", "<th>{}</th>", ((label,) for label in labels))
    rows = format_html_join(
        "",
        "<tr><th>{}</th>{}</tr>",
        (
            (labels[i], format_html_join("", "{}", ((cell(i, j, v),) for j, v in enumerate(row))))
            for i, row in enumerate(matrix)
        ),
    )
    return format_html(
        '<table class="confusion"><thead><tr><th>gold \\ predicted</th>{}</tr></thead>'
        "<tbody>{}</tbody></table>",
        head,
        rows,
    )


def per_class_table(report: dict[str, Any]) -> SafeString:
    per_class = report.get("per_class") or {}
    rows = format_html_join(
        "",
        '<tr><th>{}</th><td class="numeric">{}</td><td class="numeric">{}</td>'
        '<td class="numeric">{}</td><td class="numeric">{}</td></tr>',
        (
            (
                label,
                f"{m.get('precision', 0):.3f}",
                f"{m.get('recall', 0):.3f}",
                f"{m.get('f1', 0):.3f}",
                m.get("support", ""),
            )
            for label, m in per_class.items()
        ),
    )
    return format_html(
        "<table><thead><tr><th>intent</th><th>precision</th><th>recall</th><th>F1</th>"
        "<th>support</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


EVALUATION_FIELDS = (
    "created_at",
    "classifier",
    "dataset",
    "split",
    "examples",
    "accuracy",
    "macro_f1",
    "latency_ms_p50",
    "latency_ms_p95",
    "confusion",
    "per_class",
)


@admin.register(RouterEvaluation)
class RouterEvaluationAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "classifier",
        "dataset",
        "split",
        "examples",
        "accuracy_display",
        "macro_f1_display",
        "latency_ms_p50",
        "latency_ms_p95",
    ]
    list_filter = ["classifier", "split"]
    fields = readonly_fields = EVALUATION_FIELDS

    @admin.display(description="accuracy", ordering="accuracy")
    def accuracy_display(self, evaluation: RouterEvaluation) -> str:
        return f"{evaluation.accuracy:.3f}"

    @admin.display(description="macro-F1", ordering="macro_f1")
    def macro_f1_display(self, evaluation: RouterEvaluation) -> str:
        return f"{evaluation.macro_f1:.3f}"

    @admin.display(description="confusion matrix")
    def confusion(self, evaluation: RouterEvaluation) -> SafeString:
        return confusion_table(evaluation.report or {})

    @admin.display(description="per intent")
    def per_class(self, evaluation: RouterEvaluation) -> SafeString:
        return per_class_table(evaluation.report or {})
