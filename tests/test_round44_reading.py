"""Round 44, reading what the paste holds: an error line cut before the name it is about (a
`No such file or directory:` wrapped before its path) does not nearly match an entry's line about
one particular name (the `sglang` command that is not installed)."""

from __future__ import annotations

WRAPPED = ("Kimi-K2.6 (trust_remote_code) fails at server startup on the decode node while loading the processor:\n"
           "FileNotFoundError: [Errno 2] No such file or directory:\n"
           "'/models/hub/models--moonshotai--Kimi-K2.6/blobs/media_utils.py'\n")


def test_an_error_line_cut_before_its_name_is_not_an_entry_about_another_name(assistant):
    answer = assistant.answer(WRAPPED)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "sglang-cli-command-not-found")


def test_the_whole_line_with_its_name_still_matches(assistant):
    answer = assistant.answer("$ sglang serve --model-path Qwen/Qwen3-8B\n"
                              "FileNotFoundError: [Errno 2] No such file or directory: 'sglang'\n")
    assert answer.outcome == "fix" and answer.matches[0].id == "sglang-cli-command-not-found"
