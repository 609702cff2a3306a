"""The HTML eval report: a bar chart of the configurations side by side (inline SVG, no JS), the
metrics table (configurations, split groups, splits), the decision confusion tables, coverage by
error class of the real reports, a risk-coverage plot (matplotlib, embedded PNG), the error-origin,
dependency and resolution scores, and every failed case with what went wrong."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

TABLE_KEYS = ("cases", "in_scope", "hit@1", "hit@3", "mrr", "answer_accuracy", "decision_accuracy",
              "abstain_precision", "abstain_recall", "false_abstentions", "wrong_fixes", "fix", "lead",
              "unknown", "unknown_flags", "latency_p50_ms", "latency_p95_ms")
OUTCOMES = ("fix", "lead", "unknown")

CHART_KEYS = ("hit@1", "hit@3", "mrr", "answer_accuracy", "decision_accuracy", "abstain_precision",
              "abstain_recall")
COLORS = ("#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c")


def _chart(configs: list[tuple[str, dict]]) -> str:
    width, height, pad = 900, 300, 40
    group_w = (width - pad) / len(CHART_KEYS)
    bar_w = (group_w - 16) / max(1, len(configs))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 60}" role="img">']
    for tick in (0.25, 0.5, 0.75, 1.0):  # a scale, so small differences read as numbers
        y = height - tick * (height - 20)
        parts.append(f'<line x1="{pad}" y1="{y:.0f}" x2="{width}" y2="{y:.0f}" stroke="#ddd"/>'
                     f'<text x="{pad - 6}" y="{y + 4:.0f}" font-size="11" text-anchor="end">{tick:.2f}</text>')
    for g, key in enumerate(CHART_KEYS):
        x0 = pad + g * group_w
        parts.append(f'<text x="{x0 + group_w / 2 - 8:.0f}" y="{height + 18}" font-size="12" '
                     f'text-anchor="middle">{html.escape(key)}</text>')
        for c, (_, metrics) in enumerate(configs):
            value = float(metrics.get(key) or 0)
            h = value * (height - 20)
            x = x0 + c * bar_w
            parts.append(f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                         f'fill="{COLORS[c % len(COLORS)]}"><title>{value:.3f}</title></rect>'
                         f'<text x="{x + (bar_w - 2) / 2:.1f}" y="{height - h - 3:.1f}" font-size="9" '
                         f'text-anchor="middle">{value:.2f}</text>')
    for c, (name, _) in enumerate(configs):
        parts.append(f'<rect x="{pad + c * 180}" y="{height + 34}" width="12" height="12" fill="{COLORS[c % len(COLORS)]}"/>'
                     f'<text x="{pad + c * 180 + 16}" y="{height + 45}" font-size="12">{html.escape(name)}</text>')
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{width}" y2="{height}" stroke="#333"/></svg>')
    return "".join(parts)


def _esc(value) -> str:
    return html.escape(str(value))


def _cell(value) -> str:
    return "–" if value is None else str(value)   # None: not measured (no in-scope case)


def _metrics_table(rows: list[tuple[str, dict]]) -> str:
    header = "<tr><th></th>" + "".join(f"<th>{_esc(k)}</th>" for k in TABLE_KEYS) + "</tr>"
    body = "".join("<tr><th>" + _esc(name) + "</th>"
                   + "".join(f"<td>{_esc(_cell(m.get(k)))}</td>" for k in TABLE_KEYS) + "</tr>"
                   for name, m in rows)
    return f"<table>{header}{body}</table>"


def _confusion_table(name: str, table: dict) -> str:
    fix_row, decline_row = table["expected_fix"], table["expected_decline"]
    cells = "".join(f"<th>answered {o}</th>" for o in OUTCOMES)
    fix_cells = (f"<td>{fix_row['fix']} ({fix_row['fix_wrong_entry']} wrong entry)</td>"
                 + "".join(f"<td>{fix_row[o]}</td>" for o in OUTCOMES[1:]))
    decline_cells = "".join(f"<td>{decline_row[o]}</td>" for o in OUTCOMES)
    return (f"<h3>{_esc(name)}</h3><table class=\"confusion\"><tr><th></th>{cells}</tr>"
            f"<tr><th>expected fix</th>{fix_cells}</tr><tr><th>expected decline</th>{decline_cells}</tr></table>")


def _coverage_table(name: str, table: dict, label: str) -> str:
    rows = "".join(f"<tr><td>{_esc(value)}</td><td>{c['cases']}</td><td>{c['labelled_fix']}</td>"
                   f"<td>{c['right_fix']:.0%}</td><td>{c['relevant']:.0%}</td><td>{c['decision_accuracy']:.0%}</td></tr>"
                   for value, c in table.items())
    return (f"<h3>{_esc(name)}</h3><table><tr><th>{_esc(label)}</th><th>cases</th><th>with a labelled fix</th>"
            f"<th>answered with the right fix</th><th>fix or lead at least relevant</th>"
            f"<th>decision right</th></tr>{rows}</table>")


def risk_coverage_png(curves: list[tuple[str, list[dict]]]) -> bytes | None:
    """The risk-coverage plot as PNG bytes; None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")   # no display: render to memory
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    for name, points in curves:
        if points:
            ax.plot([p["coverage"] for p in points], [p["accuracy"] for p in points],
                    marker="o", markersize=3, label=name)
    ax.set_xlabel("coverage: share of cases answered with a fix (confidence >= threshold)")
    ax.set_ylabel("accuracy: share of those that are the right fix")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title("Risk-coverage, sweeping the confidence threshold")
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def _risk_coverage_section(report: dict) -> str:
    curves = [("all cases", report["metrics"].get("risk_coverage", []))]
    curves += [(f"group {name}", g.get("risk_coverage", [])) for name, g in report.get("groups", {}).items()]
    png = risk_coverage_png(curves)
    if png is None:
        return "<h2>Risk-coverage</h2><p>not drawn: matplotlib is not installed (pip install matplotlib).</p>"
    data = base64.b64encode(png).decode("ascii")
    return ("<h2>Risk-coverage</h2><p>Each point is a confidence threshold: the assistant answers with a fix "
            "only at or above it. Left: fewer answers; up: more of them right.</p>"
            f'<img alt="risk-coverage plot" src="data:image/png;base64,{data}">')


def _failure_reasons(c: dict) -> list[str]:
    why = []
    if c["expected"] and (not c["ranked"] or c["ranked"][0] != c["expected"]):
        why.append(f"expected {c['expected']}, ranked {', '.join(c['ranked'][:3]) or 'nothing'}")
    if c["expected"] and c["abstained"]:
        why.append(f"declined ({c.get('outcome', 'abstained')}) an answerable case")
    if c["expected"] is None and not c["abstained"]:
        why.append(f"answered an out-of-scope case with a fix: {c['ranked'][0] if c['ranked'] else '?'}")
    if c["missing"]:
        why.append("missing: " + " | ".join("/".join(g) for g in c["missing"]))
    if c["forbidden"]:
        why.append("said: " + ", ".join(c["forbidden"]))
    if c["unknown_flags"]:
        why.append("unknown flags: " + ", ".join(c["unknown_flags"]))
    return why


def write_html(report: dict, path: Path) -> None:
    configs = [("full (" + report["mode"] + ")", report["metrics"])] + list(report["baselines"].items())
    groups = report.get("groups", {})
    rows = configs + [(f"group {name}" + ("" if g.get("complete", True) else " (partial)"), g)
                      for name, g in groups.items()]
    rows += [(f"split {name}", m) for name, m in report.get("splits", {}).items()]
    confusions = [("all cases", report["metrics"]["confusion"])]
    confusions += [(f"group {name}: {', '.join(g.get('splits', []))}", g["confusion"]) for name, g in groups.items()]
    coverage = []
    if "by_error_class" in report["metrics"]:
        coverage.append(_coverage_table("all labelled real reports", report["metrics"]["by_error_class"], "error class"))
        coverage += [_coverage_table(f"split {name}", m["by_error_class"], "error class")
                     for name, m in report.get("splits", {}).items() if "by_error_class" in m]
        coverage.append(_coverage_table("by KB coverage label, all real reports", report["metrics"]["by_coverage"],
                                        "coverage"))
    kinds = [_coverage_table(f"split {name}", m["by_kind"], "kind")
             for name, m in report.get("splits", {}).items() if "by_kind" in m]
    failed = [c for c in report["per_case"] if _failure_reasons(c)]
    fails = "".join(f"<tr><td>{_esc(c['id'])}</td><td>{_esc(c['split'])}</td><td>{_esc(c.get('outcome', ''))}</td>"
                    f"<td>{_esc('; '.join(_failure_reasons(c)))}</td></tr>" for c in failed)
    extras = ""
    if report.get("extras"):
        from evals.origin_eval import html_section

        extras = html_section(report["extras"])
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>ask eval report</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin-bottom:1em}}td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px}}</style>
</head><body><h1>ask eval report ({_esc(report['mode'])} mode)</h1>
<p>{report['metrics']['cases']} cases, index: {_esc(report.get('index', {}))}</p>
{_chart(configs)}
<h2>Metrics</h2>{_metrics_table(rows)}
<h2>Decisions: expected vs answered</h2>
<p>A right decision is the right entry answered as a fix, or a lead / unknown where no fix is expected.</p>
{''.join(_confusion_table(name, table) for name, table in confusions)}
{('<h2>Coverage by error class (real GitHub reports)</h2><p>Right fix: answered as a fix with the labelled entry. '
  'At least relevant: the fix or lead named is the labelled fix or the related entry.</p>' + ''.join(coverage)) if coverage else ''}
{('<h2>Decisions by kind of paste</h2>' + ''.join(kinds)) if kinds else ''}
{_risk_coverage_section(report)}
{extras}
<h2>Failed cases ({len(failed)})</h2><table><tr><th>case</th><th>split</th><th>outcome</th><th>what went wrong</th></tr>{fails}</table>
</body></html>"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
