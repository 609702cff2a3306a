"""Answers written by the LLM from the retrieved entries, verified before anything is shown.

    answer = answer_with_llm(client, retrieval, extractive, registry, index, history, on_token)

1. The prompt (`assistant.prompt`): the retrieved sources within a token budget, the triaged
   trace, the conversation and the question, as delimited data blocks.
2. The reply is asked for as JSON (ANSWER_SCHEMA) and parsed into a Draft (`assistant.draft`).
3. Every piece is verified before it is shown, streamed (`assistant.verified_stream`) or not
   (`assistant.verify`): citations, flags against the registry, links, destructive commands,
   wrong advice, filler, support in the sources. `Answer.changes` lists every change.
4. Failure (endpoint down, timeout, 5xx, garbage, no parsable JSON) returns the extractive
   answer with a one-line `note`.
5. A lead or unknown (no known fix matched) with an error in the paste: the model is told so and
   asked only to explain the root error (`explain_unmatched`); its explanation is verified, kept
   apart in `Answer.explanation`, labelled "not from the knowledge base", and the outcome stays
   as decided (no fix). With no error line, or a how-to question, the model is not asked.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from assistant.answer import Answer
from assistant.draft import parse_draft
from assistant.errors import EndpointError
from assistant.prompt import ANSWER_MAX_TOKENS, ANSWER_SCHEMA, build_prompt
from assistant.retrieve import Retrieval
from assistant.verified_stream import VerifiedStream
from assistant.verify import Verifier, verify_draft


def _with_note(extractive: Answer, note: str) -> Answer:
    return dataclasses.replace(extractive, note=note)


def _merge_warnings(*groups: list[str]) -> list[str]:
    seen, out = set(), []
    for warning in (w for group in groups for w in group):
        key = re.sub(r"\W+", " ", warning.lower()).strip()
        if key and key not in seen:
            seen.add(key)
            out.append(warning)
    return out


def answer_with_llm(client, retrieval: Retrieval, extractive_answer: Answer, registry, index,
                    history: list[dict] | None = None,
                    on_token: Callable[[str], None] | None = None) -> Answer:
    """The model's answer to the user's case, verified; the extractive answer with a `note`
    when the model is not asked (abstention) or cannot be used."""
    if retrieval.abstain or not retrieval.hits:
        if not retrieval.analysis.errors or retrieval.decision.question:
            return _with_note(extractive_answer, "no knowledge-base entry matches well enough, so the "
                                                 "model was not asked to guess a fix")
        return explain_unmatched(client, retrieval, extractive_answer, registry, index, history)
    prompt = build_prompt(retrieval, index, registry, history)
    verifier = Verifier(prompt, retrieval, registry)
    stream = VerifiedStream(verifier, on_token, chinese=prompt.language == "Chinese") if on_token else None
    draft, fallback = _ask(client, prompt, extractive_answer, stream.feed if stream else None)
    if fallback is not None:
        return fallback
    if not draft.diagnosis and not draft.fix:
        return _with_note(extractive_answer, "the model returned an empty answer; answered from the "
                                             "knowledge base alone")
    checked = verify_draft(draft, verifier)
    changes = list(checked.changes)
    diagnosis = checked.diagnosis
    if not diagnosis:
        diagnosis = extractive_answer.diagnosis
        changes.append("No sentence of the model's diagnosis survived verification; showing the "
                       "knowledge base's diagnosis.")
    fix = checked.fix
    if draft.fix and not fix and extractive_answer.fix:
        fix = list(extractive_answer.fix)
        changes.append("No fix step of the model survived verification; showing the knowledge "
                       "base's fix.")
    citations = checked.citations
    if not citations and prompt.sources:
        citations = [prompt.sources[0].citation] + prompt.sources[0].urls
        changes.append(f"The model cited no retrieved source; cited {prompt.sources[0].citation}, "
                       "the source it was given first.")
    return dataclasses.replace(
        extractive_answer, diagnosis=diagnosis, fix=fix,
        warnings=_merge_warnings(checked.warnings, extractive_answer.warnings),
        citations=citations, mode="llm", changes=changes, note=None)


def _ask(client, prompt, extractive_answer: Answer, on_token=None):
    """The model's draft, or (when the endpoint fails or the reply is not the JSON asked for) the
    knowledge-base answer with a note saying why: (draft, None) or (None, fallback)."""
    try:
        content, _reasoning = client.chat(prompt.messages, schema=ANSWER_SCHEMA, on_token=on_token,
                                          max_tokens=ANSWER_MAX_TOKENS)
    except EndpointError as exc:
        return None, _with_note(extractive_answer, f"{exc}; answered from the knowledge base alone")
    try:
        return parse_draft(content), None
    except ValueError:
        return None, _with_note(extractive_answer, "the model's reply was not the JSON answer asked "
                                                   "for; answered from the knowledge base alone")


UNMATCHED_NOTE = ("The model's reading of the root error is not from the knowledge base: no known "
                  "fix matched this error, so none is given.")


def explain_unmatched(client, retrieval: Retrieval, extractive_answer: Answer, registry, index,
                      history: list[dict] | None = None) -> Answer:
    """A lead or unknown with an error in the paste: the model explains the root error from the
    trace, verified like any answer, and labelled as not from the knowledge base. The outcome
    stays as decided: whatever fix steps or advice the model writes are dropped, so a lead never
    becomes a fix. Not streamed: a preview could show steps that are then dropped."""
    prompt = build_prompt(retrieval, index, registry, history)
    verifier = Verifier(prompt, retrieval, registry)
    draft, fallback = _ask(client, prompt, extractive_answer)
    if fallback is not None:
        return fallback
    # only the explanation is used, so only it is verified (the same checks as any diagnosis);
    # the fix steps and advice are dropped unread, their text is not repeated anywhere
    checked = verifier.diagnosis(draft.diagnosis)
    changes = list(checked.changes)
    if draft.fix or draft.warnings:
        changes.append("The model's fix steps and advice were not shown: no known fix matched this "
                       "error, so the answer gives none.")
    if not checked.text:
        return _with_note(extractive_answer, "the model's explanation did not survive verification; "
                                             "answered from the knowledge base alone")
    return dataclasses.replace(extractive_answer, explanation=checked.text, mode="llm",
                               changes=changes, note=UNMATCHED_NOTE,
                               warnings=_merge_warnings(extractive_answer.warnings, checked.warnings))
