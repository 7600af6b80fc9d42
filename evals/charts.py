"""A server-rendered SVG line chart of a set's metrics over its runs (no script, no external library)."""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# Metric key, label (translated by the caller), colour.
SERIES = (("answer_hit", "#2563eb"), ("recall_at_5", "#16a34a"), ("mrr", "#9333ea"),
          ("cites_expected", "#0891b2"), ("flagged", "#d97706"), ("wrong_unflagged", "#dc2626"))
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 240, 40, 150, 12, 28


def metrics_chart(points: Sequence[tuple[str, dict]], labels: dict[str, str], title: str) -> SafeString:
    """`points`: (x label, metrics) oldest first; each metric is a share from 0 to 1 or None (not drawn)."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(1, len(points) - 1)

    def x(i: int) -> float:
        return LEFT + (i * step if len(points) > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - v)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'class="eval-chart" aria-label="{escape(title)}"><title>{escape(title)}</title>']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
                     f'stroke="#e5e7eb"/><text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" font-size="10" '
                     f'text-anchor="end" fill="#6b7280">{tick:.2f}</text>')
    for i, (label, _) in enumerate(points):
        parts.append(f'<text x="{x(i):.1f}" y="{HEIGHT - 8}" font-size="10" text-anchor="middle" '
                     f'fill="#6b7280">{escape(label)}</text>')
    for n, (key, colour) in enumerate(SERIES):
        coords = [(x(i), y(float(m[key]))) for i, (_, m) in enumerate(points) if m.get(key) is not None]
        if len(coords) > 1:
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in coords)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colour}"/>' for a, b in coords)
        ly = TOP + 14 + n * 18
        parts.append(f'<rect x="{WIDTH - RIGHT + 12}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{WIDTH - RIGHT + 28}" y="{ly + 1}" font-size="11" fill="#111827">'
                     f'{escape(labels.get(key, key))}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text above is escaped, numbers are formatted
