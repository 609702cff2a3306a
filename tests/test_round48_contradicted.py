"""Round 48: a user who says they already checked what an entry blames, and found it fine, does not
get that entry's fix. "cat config.json shows normal JSON" beside `config.json' is not a valid JSON
file.` is not a config.json that fails to parse (`cleared_by`); `nvidia-smi` on the host seeing the
GPU that a container cannot reach is the container's device access, not a GPU hardware fault
(`tell_apart`); and a message quoting config.json itself is never the weights-file-as-model-path
case. The same errors without those words keep their fix."""

from __future__ import annotations

CONFIG_JSON = "hf-config-json-malformed"
MODEL_PATH = "model-path-not-hf-model-directory"
GPU_FAULT = "gpu-hardware-fault-xid-ecc"
CONTAINER_GPUS = "container-loses-gpus-nvml-unknown-error-systemd-reload"

CONFIG_TRACE = (
    '  File "/usr/local/lib/python3.10/dist-packages/transformers/configuration_utils.py", line 662, in _get_config_dict\n'
    "    config_dict = cls._dict_from_json_file(resolved_config_file)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/transformers/configuration_utils.py", line 760, in _dict_from_json_file\n'
    "    return json.loads(text)\n"
    "OSError: It looks like the config file at '/models/Qwen2.5-14B-Instruct/config.json' is not a valid JSON file.\n")
DEVICE_HANDLE = "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"


def _shown(answer):
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"]


def test_a_config_json_the_user_says_is_normal_json_gets_no_broken_json_fix(assistant):
    said = "sglang.launch_server stops at once, although cat config.json shows normal JSON (I opened it by hand):\n"
    outcome, shown_id = _shown(assistant.answer(said + CONFIG_TRACE))
    assert outcome != "fix"
    assert shown_id == CONFIG_JSON   # still the closest lead, never the weights-file entry


def test_the_same_config_error_without_those_words_keeps_the_broken_json_fix(assistant):
    said = "sglang.launch_server stops at once after I edited the rope scaling in the model folder:\n"
    assert _shown(assistant.answer(said + CONFIG_TRACE)) == ("fix", CONFIG_JSON)


def test_a_gpu_the_hosts_nvidia_smi_sees_is_no_hardware_fault_when_a_container_cannot_reach_it(assistant):
    said = ("nvidia-smi on the host works and lists all 8 GPUs, but in the SGLang container started with "
            "--gpus all, nvidia-smi prints:\n")
    outcome, shown_id = _shown(assistant.answer(said + DEVICE_HANDLE))
    assert (outcome, shown_id) != ("fix", GPU_FAULT)
    assert shown_id == CONTAINER_GPUS


def test_a_device_handle_error_on_the_host_itself_keeps_the_hardware_fault_fix(assistant):
    said = "After the crash, nvidia-smi on the bare-metal node prints this for one GPU, and dmesg shows Xid 79:\n"
    assert _shown(assistant.answer(said + DEVICE_HANDLE)) == ("fix", GPU_FAULT)
