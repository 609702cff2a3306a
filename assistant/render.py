"""Render an Answer for a terminal (or any plain-text surface): Markdown-ish, readable uncoloured."""

from __future__ import annotations

from assistant.answer import Answer

_BOLD, _DIM, _RED, _YELLOW, _GREEN, _CYAN, _RESET = (
    "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[36m", "\x1b[0m")


def _detected_line(answer: Answer) -> str:
    env = answer.detected
    parts = []
    if env.sglang_version:
        parts.append(f"SGLang {env.sglang_version}")
    if env.torch_version:
        parts.append(f"torch {env.torch_version}")
    if env.cuda_version:
        parts.append(f"CUDA {env.cuda_version}")
    if env.flashinfer_version:
        parts.append(f"flashinfer {env.flashinfer_version}")
    if env.gpu:
        parts.append(env.gpu)
    if env.flags:
        parts.append("flags: " + " ".join(env.flags[:14]) + (" ..." if len(env.flags) > 14 else ""))
    return ", ".join(parts)


def render_text(answer: Answer, color: bool = False) -> str:
    def c(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    out: list[str] = []
    if answer.note:
        out.append(c(_DIM, f"note: {answer.note}"))
    detected = _detected_line(answer)
    if answer.abstained:
        out.append(c(_YELLOW + _BOLD, "No confident match in the knowledge base."))
        out.append(answer.diagnosis)
        if answer.primary_error:
            out += ["", c(_BOLD, "The error that matters in your log:"), f"  {answer.primary_error}"]
        if detected:
            out += ["", c(_BOLD, "Detected: ") + detected]
        out += ["", c(_BOLD, "Collect next:")] + [f"  - {s}" for s in answer.next_steps]
    else:
        top = answer.matches[0] if answer.matches else None
        if top:
            out.append(c(_GREEN + _BOLD, f"{top.title}") + c(_DIM, f"  [{top.id}]"))
            if top.title_zh:
                out.append(top.title_zh)
            out.append(c(_DIM, f"match score {top.score:.2f}, answer confidence {answer.confidence:.2f}, "
                               f"KB confidence: {top.confidence}, mode: {answer.mode}"))
            if top.evidence:
                out += ["", c(_BOLD, "Matched in your log:")] + [f"  > {e}" for e in top.evidence]
        if detected:
            out += ["", c(_BOLD, "Detected: ") + detected]
        out += ["", c(_BOLD, "What went wrong:"), f"  {answer.diagnosis}"]
        if answer.fix:
            out += ["", c(_BOLD, "Fix:")]
            for i, step in enumerate(answer.fix, 1):
                first, *rest = step.split("\n")
                out.append(f"  {i}. {first}")
                out += [c(_CYAN, f"     {line.strip()}") for line in rest]
        if answer.next_steps:
            out += ["", c(_BOLD, "Verify / next:")] + [f"  - {s}" for s in answer.next_steps]
    if answer.warnings:
        out += ["", c(_RED + _BOLD, "Warnings:")] + [f"  ! {w}" for w in answer.warnings]
    if answer.changes:
        out += ["", c(_BOLD, "Checked before display:")] + [f"  * {ch}" for ch in answer.changes]
    if answer.citations:
        out += ["", c(_BOLD, "Sources:")] + [f"  - {s}" for s in answer.citations]
    others = answer.matches[1:] if not answer.abstained else []
    if others:
        out += ["", c(_DIM, "Other candidates: " + "; ".join(f"{m.id} ({m.score:.2f})" for m in others))]
    if answer.similar_issues:
        out += ["", c(_BOLD, "Similar reports:")]
        for m in answer.similar_issues:
            meta = m.meta
            labels = ",".join(meta.get("labels", [])[:4])
            out.append(f"  - #{meta.get('number', '?')} {m.title} [{meta.get('state', '?')}"
                       f"{', ' + labels if labels else ''}; updated {str(meta.get('updated_at', '?'))[:10]}] {m.url or ''}")
    return "\n".join(out)
