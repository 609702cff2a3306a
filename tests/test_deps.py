"""Dependency advice as a user sees it: which package, the pin of their SGLang release, and the
exact pip command (companions, extras, wheel indexes, exact pins, torch-ABI mismatches).

Uses the committed kb/sglang_deps.json (built from each release's wheel METADATA)."""

from __future__ import annotations

import pytest

from assistant.deps import DEFAULT_PATH, DependencyPins, dependency_advice
from ingest.sglang_errors_deps import metadata_pins


@pytest.fixture(scope="module")
def pins():
    if not DEFAULT_PATH.exists():
        pytest.skip("kb/sglang_deps.json not built")
    return DependencyPins.load()


def advise(paste: str, sglang_version: str | None = None):
    return dependency_advice(paste, sglang_version)


def test_flashinfer_is_installed_with_its_matching_cubin(pins):
    advice = advise("Exception: flashinfer_python with minimum required version 0.6.3 is not installed. "
                    "Please uninstall the old version and reinstall", "0.5.9")
    assert advice.package == "flashinfer-python" and advice.pinned_spec == "==0.6.3"
    assert advice.install_command == 'pip install "flashinfer-python==0.6.3" "flashinfer-cubin==0.6.3"'


def test_release_extras_of_the_package_are_kept(pins):
    advice = advise("Exception: flashinfer_python is installed with version 0.6.8.post1, which is less than "
                    "the minimum required version 0.6.12. Please uninstall the old version", "0.5.13")
    assert advice.installed_version == "0.6.8.post1" and advice.satisfied is False
    assert advice.install_command == 'pip install "flashinfer-python[cu13]==0.6.12" "flashinfer-cubin==0.6.12"'


def test_cubin_mismatch_reinstalls_both_at_the_release_pin(pins):
    advice = advise("RuntimeError: flashinfer-cubin version (0.6.8.post1) does not match flashinfer version "
                    "(0.6.10). Please install the same version of both packages.", "0.5.11")
    assert advice.package == "flashinfer-python"
    assert advice.install_command == 'pip install "flashinfer-python==0.6.8.post1" "flashinfer-cubin==0.6.8.post1"'


def test_old_flashinfer_comes_from_its_wheel_index(pins):
    old_name = advise("Exception: flashinfer with minimum required version 0.1.6 is not installed.", "0.4.0")
    assert old_name.install_command == 'pip install "flashinfer>=0.1.6" -i https://flashinfer.ai/whl/cu121/torch2.4/'
    aot = advise("Exception: flashinfer_python is installed with version 0.2.0.post2, which is less than the "
                 "minimum required version 0.2.1.post1. Please uninstall", "0.4.3")
    assert aot.install_command == ('pip install "flashinfer-python>=0.2.1.post1" '
                                   "--find-links https://flashinfer.ai/whl/cu124/torch2.5/flashinfer-python")


def test_flashinfer_on_pypi_needs_no_index(pins):
    advice = advise("ModuleNotFoundError: No module named 'flashinfer'", "0.4.6")
    assert advice.install_command == 'pip install "flashinfer-python==0.2.3"'


def test_closed_range_installs_the_newest_tested_version(pins):
    advice = advise("ModuleNotFoundError: No module named 'vllm'", "0.4.1")
    assert advice.pinned_spec == ">=0.6.3.post1,<=0.6.4.post1"
    assert advice.install_command == 'pip install "vllm==0.6.4.post1"'


def test_open_range_stays_a_range(pins):
    advice = advise("ModuleNotFoundError: No module named 'llguidance'", "0.5.7")
    assert advice.install_command == 'pip install "llguidance>=0.7.11,<0.8.0"'


def test_pip_resolver_conflict_of_sglang_names_package_release_and_installed(pins):
    paste = ('sglang 0.4.3.post4 requires vllm<=0.7.2,>=0.6.4.post1; extra == "srt", but you have vllm 0.8.2 '
             "which is incompatible.")
    advice = advise(paste)
    assert advice.package == "vllm" and advice.sglang_version == "0.4.3.post4" and advice.pins_release == "0.4.3"
    assert advice.installed_version == "0.8.2" and advice.satisfied is False
    assert advice.install_command == 'pip install "vllm==0.7.2"'


def test_another_packages_resolver_conflict_is_not_an_sglang_pin(pins):
    assert advise("llava 1.2.2.post1 requires torch==2.1.2, but you have torch 2.4.0 which is incompatible.") is None


def test_torch_abi_symbol_in_sgl_kernel_asks_for_the_release_torch(pins):
    paste = """sglang 0.5.6.post2 / sgl-kernel 0.3.18.post2 / torch 2.8.0+cu128
- ImportError: /opt/venv/lib/python3.11/site-packages/sgl_kernel/sm90/common_ops.abi3.so: undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib
- ModuleNotFoundError: No module named 'common_ops'"""
    advice = advise(paste)
    assert advice.package == "torch" and advice.pinned_spec == "==2.9.1"
    assert advice.installed_version == "2.8.0+cu128" and "sgl-kernel" in advice.reason
    assert advice.install_command == 'pip install "torch==2.9.1"'


def test_torch_abi_keeps_the_users_cuda_build(pins):
    paste = ("PyTorch: 2.7.0+cu128\nImportError: /usr/local/lib/python3.11/dist-packages/sgl_kernel/"
             "common_ops.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb")
    advice = advise(paste, "0.4.9")
    assert advice.install_command == 'pip install "torch==2.7.1" --index-url https://download.pytorch.org/whl/cu128'


def test_torch_abi_with_the_pinned_torch_reinstalls_the_extension(pins):
    paste = ("torch 2.9.1\nImportError: /x/site-packages/sgl_kernel/sm90/common_ops.abi3.so: undefined symbol: "
             "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib")
    advice = advise(paste, "0.5.9")
    assert advice.package == "sgl-kernel" and advice.pinned_spec == "==0.3.21"
    assert advice.install_command == 'pip install "sgl-kernel==0.3.21" --force-reinstall'


def test_cuda13_torch_gets_the_cuda13_kernel_wheel(pins):
    paste = ("Linux aarch64\ntorch 2.9.1+cu130\nException: sgl-kernel is installed with version 0.3.20, which is "
             "less than the minimum required version 0.3.21. Please reinstall")
    advice = advise(paste, "0.5.9")
    assert advice.install_command == ("pip install https://github.com/sgl-project/whl/releases/download/v0.3.21/"
                                      "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_aarch64.whl")


def test_missing_cuda_driver_symbol_gets_no_pip_pin(pins):
    paste = ("ImportError: /opt/conda/lib/python3.10/site-packages/sgl_kernel/common_ops.abi3.so: "
             "undefined symbol: cuGreenCtxStreamCreate")
    assert advise(paste, "0.4.9") is None


def test_check_newer_than_the_registry_release_pins_its_own_minimum(pins):
    paste = ("Exception: flashinfer_python is installed with version 0.6.3, which is less than the minimum "
             "required version 0.6.4. Please uninstall the old version")
    advice = advise(paste, "0.5.9")
    assert advice.pinned_spec == "==0.6.4" and advice.source == "message"
    assert advice.install_command == 'pip install "flashinfer-python==0.6.4" "flashinfer-cubin==0.6.4"'


def test_message_minimum_names_the_release_when_the_paste_does_not(pins):
    advice = advise("Exception: sglang-kernel is installed with version 0.4.3, which is less than the minimum "
                    "required version 0.4.4. Please reinstall")
    assert advice.pins_release in {"0.5.14", "0.5.15"} and advice.install_command == 'pip install "sglang-kernel==0.4.4"'


def test_metadata_keeps_the_requirements_own_extras():
    metadata = ("Metadata-Version: 2.1\nName: sglang\nVersion: 9.9.9\n"
                "Requires-Dist: flashinfer_python[cu13]==0.6.12\nRequires-Dist: flashinfer_cubin==0.6.12\n")
    pins = metadata_pins(metadata)
    assert pins["flashinfer-python"]["pip_extras"] == ["cu13"] and "pip_extras" not in pins["flashinfer-cubin"]


OLD_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2222, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/schedule_batch.py", line 972, in alloc_token_slots\n'
    "    raise RuntimeError(error_msg)\n")


def test_a_paste_dated_by_its_traceback_gets_no_pin_of_the_newest_release(assistant, pins):
    # no version line, but `alloc_token_slots` exists only in older releases: the newest
    # release's transformers pin would downgrade or upgrade the user into a broken install
    answer = assistant.answer(OLD_TRACEBACK + "ImportError: cannot import name 'AutoImageProcessor' from 'transformers'")
    advice = answer.dependency
    assert advice is not None and advice.package == "transformers" and advice.dated
    newest = str(pins.versions[-1])
    assert advice.pins_release != newest
    assert "pip install" not in answer.text.split("Dependency:")[1].splitlines()[0]
    assert "pip show sglang" in answer.text


def test_sglangs_warning_about_an_optional_models_import_is_no_dependency_problem(assistant):
    warning = ("WARNING:  Ignore import error when loading sglang.srt.models.mllama4: "
               "No module named 'transformers.models.llama4'\n")
    crash = OLD_TRACEBACK + "RuntimeError: Decode out of memory. Try to lower your batch size.\n"
    assert assistant.answer(warning + crash).dependency is None
    # it is the cause when the model's architecture is then reported as unsupported
    unsupported = warning + "ValueError: Model architectures ['Llama4ForConditionalGeneration'] are not supported for now."
    assert assistant.answer(unsupported).dependency is not None


def test_a_runtime_module_missing_on_an_old_release_points_at_the_runtime_extra(pins):
    """Up to 0.5.2 xgrammar came only with the `srt` extra: the answer says so (other runtime modules
    are likely missing too) and still gives the single pinned install."""
    from assistant.provenance import dependency_sentence

    old = dependency_advice(["ModuleNotFoundError: No module named 'xgrammar'"], "0.5.2", pins)
    sentence = dependency_sentence(old)
    assert "the `srt` extra" in sentence and "kb:sglang-installed-without-runtime-extra" in sentence
    assert sentence.endswith('pip install "xgrammar==0.1.24"')
    new = dependency_advice(["ModuleNotFoundError: No module named 'xgrammar'"], "0.5.9", pins)
    assert "`srt` extra" not in dependency_sentence(new)   # a base requirement from 0.5.3 on
