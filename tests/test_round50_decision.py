"""Round 50: the right entry is first, and the paste shows its line, so its fix is given.

- Google Cloud Logging's viewer writes each entry's severity and RFC 3339 time before the
  program's message (`ERROR 2026-03-02T10:15:42.118204311Z ...`): a collector's prefix like
  `kubectl logs --timestamps`, not part of the message. Read as the message, the shell's report
  that the server was killed became the paste's "first error", and the /dev/shm fix a lead.
- A ServerArgs dump dates the release that printed it: fields no release since 0.4 has
  (`additional_ports`) beside only fields the oldest known release had mean an older release, so
  an entry about SGLang before 0.4 fits; a dump with current fields still does not.
"""

from __future__ import annotations

from assistant.server_args_release import predates_registry
from assistant.trace import analyze

SHM = "docker-shm-nccl-unhandled-system-error"
FORKED = "cuda-reinit-forked-subprocess-legacy-launch"

CLOUD_LOGGING = (
    "SGLang in a container on 8x H100 dies at start, copied from the Logs Explorer:\n\n"
    "ERROR 2026-03-02T10:15:42.118204311Z ./start.sh: line 12: 41 Killed python3 -m sglang.launch_server --tp 8 ...\n"
    "ERROR 2026-03-02T10:15:41.903112650Z [2026-03-02 10:15:41] Received sigquit from a child process. "
    "It usually means the child failed.\n"
    "ERROR 2026-03-02T10:15:41.902987112Z Error while creating shared memory segment /dev/shm/nccl-Ab12Cd "
    "(size 9637888)\n")

FORKED_ERROR = ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                "multiprocessing, you must use the 'spawn' start method\n")
OLD_DUMP = ("server_args=ServerArgs(model_path='/models/Qwen2-7B-Instruct', tokenizer_path='/models/Qwen2-7B-Instruct', "
            "tokenizer_mode='auto', load_format='auto', dtype='auto', trust_remote_code=False, host='127.0.0.1', "
            "port=30000, additional_ports=[30001, 30002, 30003, 30004], mem_fraction_static=0.88, tp_size=1)")
CURRENT_DUMP = ("server_args=ServerArgs(model_path='/models/Qwen2-7B-Instruct', tokenizer_path='/models/Qwen2-7B-Instruct', "
                "host='127.0.0.1', port=30000, mem_fraction_static=0.88, tp_size=1, cuda_graph_bs=None, "
                "disaggregation_mode='null', deepep_mode='auto', some_new_field=1)")


def _shown(answer) -> tuple[str, str | None]:
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"] if shown["matches"] else None


def test_cloud_logging_severity_and_time_are_not_part_of_the_message():
    analysis = analyze(CLOUD_LOGGING)
    assert analysis.errors
    assert not any(error.text.startswith("ERROR 2026") for error in analysis.errors)


def test_a_cloud_logging_paste_with_the_shm_line_gets_the_shm_fix(assistant):
    assert _shown(assistant.answer(CLOUD_LOGGING)) == ("fix", SHM)


def test_a_dump_with_fields_only_old_releases_had_predates_the_registry():
    assert predates_registry(OLD_DUMP)
    assert not predates_registry(CURRENT_DUMP)
    assert not predates_registry(None)


def test_an_old_servers_forked_subprocess_error_gets_the_legacy_fix(assistant):
    paste = "python -m sglang.launch_server --model-path /models/Qwen2-7B-Instruct\n" + OLD_DUMP + "\n" + FORKED_ERROR
    assert _shown(assistant.answer(paste)) == ("fix", FORKED)


def test_a_current_servers_forked_subprocess_error_gets_no_legacy_fix(assistant):
    paste = "python -m sglang.launch_server --model-path /models/Qwen2-7B-Instruct\n" + CURRENT_DUMP + "\n" + FORKED_ERROR
    assert _shown(assistant.answer(paste)) != ("fix", FORKED)
