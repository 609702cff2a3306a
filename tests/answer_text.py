"""Parts of a rendered answer as the terminal shows them, for tests that assert what a user reads."""

from __future__ import annotations

NEXT_STEPS_HEADINGS = ("Collect or try next:", "接下来收集或尝试：")


def next_steps(text: str) -> list[str]:
    """The answer's "Collect or try next" items (English or Chinese heading), without their bullets."""
    marker = next(heading for heading in NEXT_STEPS_HEADINGS if heading in text)
    block = text.split(marker, 1)[1]
    return [line[4:] for line in block.splitlines() if line.startswith("  - ")]
