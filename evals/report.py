"""The HTML eval report: a bar chart of the configurations side by side (inline SVG, no JS),
the metrics table, and every failed case with what was missing."""

from __future__ import annotations

import html
from pathlib import Path

CHART_KEYS = ("hit@1", "hit@3", "mrr", "answer_accuracy", "abstain_precision", "abstain_recall")
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
            value = float(metrics.get(key, 0))
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


def write_html(report: dict, path: Path) -> None:
    configs = [("full (" + report["mode"] + ")", report["metrics"])] + list(report["baselines"].items())
    keys = list(report["metrics"].keys())
    rows = "".join("<tr><th>" + html.escape(name) + "</th>" + "".join(f"<td>{m.get(k, '')}</td>" for k in keys)
                   + "</tr>" for name, m in configs)
    failed = [c for c in report["per_case"]
              if (c["expected"] and not c["correct"]) or (c["expected"] is None and not c["abstained"])]
    fails = []
    for c in failed:
        why = []
        if c["expected"] and (not c["ranked"] or c["ranked"][0] != c["expected"]):
            why.append(f"expected {c['expected']}, ranked {', '.join(c['ranked'][:3]) or 'nothing'}")
        if c["expected"] and c["abstained"]:
            why.append("abstained on an answerable case")
        if c["expected"] is None and not c["abstained"]:
            why.append(f"answered an out-of-scope case with {c['ranked'][0] if c['ranked'] else '?'}")
        if c["missing"]:
            why.append("missing: " + " | ".join("/".join(g) for g in c["missing"]))
        if c["forbidden"]:
            why.append("said: " + ", ".join(c["forbidden"]))
        if c["unknown_flags"]:
            why.append("unknown flags: " + ", ".join(c["unknown_flags"]))
        fails.append(f"<tr><td>{html.escape(c['id'])}</td><td>{html.escape(c['split'])}</td>"
                     f"<td>{html.escape('; '.join(why))}</td></tr>")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>ask eval report</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px}}</style>
</head><body><h1>ask eval report ({html.escape(report['mode'])} mode)</h1>
<p>{report['metrics']['cases']} cases, index: {html.escape(str(report.get('index', {})))}</p>
{_chart(configs)}
<h2>Metrics</h2><table><tr><th></th>{''.join(f'<th>{html.escape(k)}</th>' for k in keys)}</tr>{rows}</table>
<h2>Failed cases ({len(failed)})</h2><table><tr><th>case</th><th>split</th><th>what went wrong</th></tr>{''.join(fails)}</table>
</body></html>"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
