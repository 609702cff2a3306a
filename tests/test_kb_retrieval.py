"""Every KB entry is found by its own error lines: `ask` on an entry's signatures (or, for an entry
without error lines, its symptoms) ranks that entry first."""

import pytest

from assistant.kb import load_entries
from tests.conftest import REPO

ENTRIES = load_entries(REPO / "kb" / "entries")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_entry_ranks_first_on_its_own_signatures(assistant, entry):
    query = "\n".join(entry.signatures or entry.symptoms)
    answer = assistant.answer(query)
    ranked = [m.id for m in answer.matches]
    assert ranked and ranked[0] == entry.id, f"{entry.id}: ranked {ranked[:3]}"
