"""Round 51: SGLang's launchers and NVIDIA's cards are each listed once, and every reader uses the list.

The diffusion server (`python3 -m sglang.multimodal_gen.runtime.launch_server`) and `sglang
generate` were no launch command to the paste reader, so their flags were not shown; a sentence that
only names `sglang serve` was read as the launch command, so a lead did not ask for it; a card named
only as `GB200` or `H200` was no sign of NVIDIA hardware while `H100` was; and an error the user
quotes was cut at the first apostrophe of their sentence or of the message. These tests read what the
user reads; the pastes are made up in the shape of such reports."""

from __future__ import annotations

from assistant.quoted_line import quoted_messages
from assistant.render import render_text
from assistant.trace import analyze

DIFFUSION_SERVER = """Image generation server on 2x H100 crashes at start:
python3 -m sglang.multimodal_gen.runtime.launch_server --model-path black-forest-labs/FLUX.1-dev --num-gpus 2 --port 30010
[03-01 10:00:00] Automatically enable dit_layerwise_offload for Flux for best performance
RuntimeError: CUDA error: an illegal memory access was encountered
"""
DIFFUSION_CLI = """sglang generate --model-path black-forest-labs/FLUX.1-dev --prompt "a red fox" --save-output
[03-01 10:00:00] Automatically enable dit_layerwise_offload for Flux for best performance
RuntimeError: CUDA error: an illegal memory access was encountered
"""
# the user names the launcher in a sentence and shows no command
NAMES_SGLANG_SERVE = """Installed SGLang from source; any `sglang serve` command hangs right after start with no error, the last lines are:
[2025-10-02 09:15:20 TP0] Load weight begin. avail mem=78.50 GB
[2025-10-02 09:15:40 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB
"""
# a card named by its model number only, no NVIDIA or CUDA word anywhere
GB200_ONLY = """Our GB200 rack: the server is killed while it loads the weights.
[2025-10-02 09:15:20 TP0] Load weight begin. avail mem=180.50 GB
Killed
"""


def _detected(text: str) -> str:
    return next((line for line in text.splitlines() if line.startswith("Detected:")), "")


def test_the_diffusion_server_command_is_read_and_its_own_flags_are_not_held_against_it(assistant):
    text = render_text(assistant.answer(DIFFUSION_SERVER))
    assert "flags: --model-path black-forest-labs/FLUX.1-dev --num-gpus 2 --port 30010" in _detected(text)
    # --num-gpus is the diffusion server's flag, not in the LLM server's flag registry
    assert "--num-gpus, which" not in text


def test_sglang_generate_is_a_launch_command_whose_flags_are_its_own(assistant):
    answer = assistant.answer(DIFFUSION_CLI)
    assert answer.detected.launch_command.startswith("sglang generate --model-path")
    text = render_text(answer)
    assert "--model-path black-forest-labs/FLUX.1-dev" in _detected(text)
    assert "--prompt, which" not in text and "--save-output, which" not in text


def test_a_sentence_that_names_sglang_serve_is_not_the_launch_command_so_the_lead_asks_for_it(assistant):
    answer = assistant.answer(NAMES_SGLANG_SERVE)
    assert answer.outcome != "fix"
    assert answer.detected.launch_command is None
    assert "The exact launch command" in render_text(answer)


def test_a_command_another_package_names_after_sglang_is_not_sglangs():
    env = analyze("python -m hisim.simulation.sglang.launch_server --help\n"
                  "OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n").environment
    assert env.launch_command is None and env.flags == ()


def test_a_card_named_only_by_its_number_reads_as_nvidia(assistant):
    assert assistant.answer(GB200_ONLY).detected.hardware == "nvidia"
    for card in ("H200", "A800", "B300"):
        assert analyze(GB200_ONLY.replace("GB200", card)).environment.hardware == "nvidia", card


def test_a_quoted_error_is_read_whole_and_an_apostrophe_is_no_quote():
    # the message's own single quotes stay inside the user's double quotes
    assert quoted_messages('[Bug] "got an unexpected keyword argument \'residual\'" after the upgrade') == [
        "got an unexpected keyword argument 'residual'"]
    assert quoted_messages("I'm not sure what changed, it doesn't start since I upgraded") == []
    assert quoted_messages("启动时报「Failed to find C compiler」，怎么办？") == ["Failed to find C compiler"]
