"""Answers after a new-user trial (round 42, ux2), as a user reads them: the same transformers message
is recognised whatever path it quotes; an SGLang env var or flag that only one entry names leads to
that entry; and the facts a paste states (flags of a ServerArgs dump, the GPU, the NCCL version) are
read as the user wrote them."""

from __future__ import annotations

import pytest

from assistant.quoted_paths import line_with_paths_as_placeholders, signature_paths
from assistant.render import render_text

# A4: a web UI loading CLIP from the Windows Hugging Face cache; the quoted path is a directory
CONFIG_NOT_JSON_WINDOWS = (
    "Starting the webui suddenly fails while loading openai/clip-vit-large-patch14 from the Hugging Face cache, "
    "without any change on my side:\n"
    "[Bug]: OSError: It looks like the config file at 'C:\\Users\\.cache\\huggingface\\transformers\\' "
    "is not a valid JSON file.\n")


def test_the_config_json_message_is_recognised_whatever_path_it_quotes(assistant):
    answer = assistant.answer(CONFIG_NOT_JSON_WINDOWS)
    assert answer.matches and answer.matches[0].id == "hf-config-json-malformed"
    assert answer.outcome in ("fix", "lead")


def test_a_quoted_weights_file_is_still_not_the_config_json_entrys_error(assistant):
    # the entry's own distinction: a quoted weights file means --model-path points at that file
    answer = assistant.answer("OSError: It looks like the config file at '/data/out/full_sft_768.pth' "
                              "is not a valid JSON file.\n")
    assert not (answer.outcome == "fix" and answer.matches[0].id == "hf-config-json-malformed")


@pytest.mark.parametrize("line, fits", [
    ("at 'c:\\users\\me\\.cache\\huggingface\\transformers\\' is not", True),   # a directory
    ("at '<path>/config.json' is not", True),                                      # the same file
    ("at '/srv/models/qwen2.5-7b' is not", True),                                  # a model directory
    ("at '<path>/pytorch_model.bin' is not", False),                               # another file
    ("at 'https://huggingface.co/x/config.json' is not", False),                   # a URL, no path
])
def test_a_quoted_path_stands_for_any_path_but_another_file(line, fits):
    sig, files = signature_paths("at '<path>/config.json' is not")
    assert (line_with_paths_as_placeholders(line, files) == sig) is fits

