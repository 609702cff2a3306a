"""One KB entry as a reader sees it (`ask kb show ID`): the cause, every step with its commands and
the releases it applies to, how to verify, what not to do, and the sources.

A lead names an entry without showing its steps as the fix; this is where a user who has
confirmed the lead reads them. Every step is shown, each labelled with its releases, because the
reader's release is not known here."""

from __future__ import annotations

from assistant.answer import format_step
from assistant.kb import Entry


def render_entry(entry: Entry, language: str = "en") -> str:
    """The entry as plain text, in Chinese where it has Chinese text and `language` is "zh"."""
    zh = language == "zh"

    def pick(english: str, chinese: str | None) -> str:
        return chinese if zh and chinese else english

    labels = (("Cause", "原因"), ("Steps", "步骤"), ("Verify", "验证"), ("Do not", "不要这样做"),
              ("Error lines it is about", "它针对的报错行"), ("Scope", "适用范围"), ("Sources", "来源"))
    label = {en: (zh_label if zh else en) for en, zh_label in labels}
    lines = [pick(entry.title, entry.title_zh), f"[kb:{entry.id}]", ""]
    lines += [f"{label['Cause']}:", "  " + " ".join(pick(entry.cause, entry.cause_zh).split()), ""]
    lines.append(f"{label['Steps']}:")
    for number, step in enumerate(entry.fix, 1):
        text = format_step(pick(step.text, step.text_zh), step.commands, step.versions, show_versions=True,
                           caveat=pick(step.caveat, step.caveat_zh) if step.caveat else None,
                           language="zh" if zh and step.text_zh else "en")
        lines += [f"  {number}. " + text.replace("\n", "\n     ")]
    if entry.verify:
        verify = entry.verify_zh if zh and len(entry.verify_zh) == len(entry.verify) else entry.verify
        lines += ["", f"{label['Verify']}:"] + [f"  - {line}" for line in verify]
    if entry.wrong_advice:
        lines += ["", f"{label['Do not']}:"] + [f"  - {pick(advice.claim, advice.claim_zh)} -> {pick(advice.fact, advice.fact_zh)}"
                                                for advice in entry.wrong_advice]
    if entry.signatures:
        lines += ["", f"{label['Error lines it is about']}:"] + [f"  {line}" for line in entry.signatures[:6]]
    scope = [part for part in (
        f"SGLang {entry.affected}" if entry.affected else "",
        f"{'修复于' if zh else 'fixed in'} {entry.fixed}" if entry.fixed else "",
        ", ".join(h for h in entry.hardware if h != "any"),
        ", ".join(entry.os)) if part]
    if scope:
        lines += ["", f"{label['Scope']}: " + "; ".join(scope)]
    if entry.sources:
        lines += ["", f"{label['Sources']}:"] + [f"  - {source.url or source.seed}"
                                                  + (f" ({source.title})" if source.title else "")
                                                  for source in entry.sources]
    return "\n".join(lines)
