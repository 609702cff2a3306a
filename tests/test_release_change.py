"""A report that compares two SGLang releases ("worked on 0.5.3, slower after upgrading to 0.5.6")
is told what the releases' own metadata says changed between them: the pins of torch, flashinfer,
sgl-kernel, transformers, ... and the launch flags the newer release dropped, plus how to find which
change it is. Versions of other packages in the same words are not SGLang's."""

from __future__ import annotations

from packaging.version import Version

from assistant.upgrade import compared_versions, release_change
from assistant.trace import analyze

UPGRADE = ("After upgrading sglang from 0.5.3 to 0.5.6, Qwen3-32B on 4xH100 with --tp 4 gives about 30% "
           "fewer tokens/s with the same bench_serving command. Nothing else changed. Any idea?")


def test_the_two_releases_compared_are_read_from_the_users_words():
    assert compared_versions(UPGRADE) == ("0.5.3", "0.5.6")
    assert compared_versions("sglang v0.5.6 works, v0.5.2 crashes at start") == ("0.5.2", "0.5.6")
    assert compared_versions("从 0.5.3 升级到 0.5.6 之后输出乱码") == ("0.5.3", "0.5.6")
    # another package's version is not SGLang's; one SGLang version compares nothing
    assert compared_versions("after upgrading to sglang 0.5.6 with flashinfer 0.4.0 it crashes") is None
    assert compared_versions("sglang 0.5.6 with sgl-kernel 0.3.18 and torch 2.9.1 crashes after upgrading") is None
    # a version outside SGLang's releases is another package's ("vllm version 0.8.5")
    releases = (Version("0.4.0"), Version("0.5.23"))
    assert compared_versions("after upgrading, vllm version 0.8.5 and sglang 0.4.6", releases) is None
    assert compared_versions("upgraded sglang to 0.5.2; pyproject has flashinfer at 0.4.0rc1") is None
    # a version its sentence gives another package, or a pin of another package, is not SGLang's
    assert compared_versions("On Sglang 0.4.6.post2 it asked for vllm 0.8.4; after I upgrade vllm to version 0.8.5 "
                             "the error appears") is None
    assert compared_versions("installing sglang pulls uvloop 0.22 and it fails; uvloop==0.21.0 works") is None
    assert compared_versions("sglang[all]==0.5.3 works, sglang==0.5.6 is slow") == ("0.5.3", "0.5.6")
    # two versions with no word of a change are not a comparison
    assert compared_versions("sglang 0.5.6 and sglang-router 0.2.1 on 8xH100") is None


def test_an_upgrade_report_is_told_which_pins_changed_and_how_to_find_the_cause(assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_sections

    answer = assistant.answer(UPGRADE)
    change = answer.release_change
    assert change is not None and (change.older_release, change.newer_release) == ("0.5.3", "0.5.6")
    pins = {pin.package: (pin.before, pin.after) for pin in change.pins}
    assert pins["torch"] == ("==2.8.0", "==2.9.1") and pins["sgl-kernel"] == ("==0.3.14.post1", "==0.3.18.post2")
    assert "transformers" in pins and "openai" not in pins    # kernels and numerics, not every package
    assert "Release change: SGLang 0.5.3 → 0.5.6 changes these pins: torch ==2.8.0 → ==2.9.1" in answer.text
    assert change.sentence() in answer_markdown(answer)
    assert "torch ==2.8.0 → ==2.9.1" in "\n".join(answer_sections(answer))
    assert answer.abstained and "server_args=" in answer.next_steps[0]
    assert 'pip install "sglang==0.5.3"' in answer.next_steps[0]
    assert answer.to_json()["release_change"]["pins"][0] == {"package": "torch", "older": "==2.8.0",
                                                             "newer": "==2.9.1"}


def test_a_flag_the_newer_release_dropped_is_named_and_chinese_readers_read_it_in_chinese(assistant):
    answer = assistant.answer("从 0.5.3 升级到 0.5.6 之后 Qwen3 输出乱码\n"
                              "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-ep-moe --tp 8")
    assert answer.reader_language == "zh" and answer.release_change is not None
    assert answer.release_change.flags_dropped == ("--enable-ep-moe",)
    assert "版本变化：SGLang 0.5.3 → 0.5.6 改了这些依赖的锁定版本：torch ==2.8.0 → ==2.9.1" in answer.text
    assert "你的启动命令用了 `--enable-ep-moe`，而 0.5.6 已经没有它" in answer.text


def test_a_report_about_one_release_gets_no_release_change(assistant):
    assert release_change(analyze("sglang 0.5.6 crashes after the first request with CUDA error")) is None
    assert assistant.answer("OSError: [Errno 98] Address already in use").release_change is None


def test_the_users_release_in_a_comparison_is_the_one_that_fails():
    from assistant.version_words import failing_version

    for words, expected in (("Worked on sglang 0.5.5, broken on 0.5.6: GLM-4.5V outputs garbage", "0.5.6"),
                            ("sglang v0.5.6 works, v0.5.2 crashes at start", "0.5.2"),
                            ("on 0.5.4 it crashes but 0.5.6 is fine", "0.5.4"),
                            ("从 0.5.3 升级到 0.5.6 之后输出乱码", "0.5.6"),
                            ("After upgrading sglang from 0.5.3 to 0.5.6, throughput dropped", "0.5.6")):
        assert failing_version(words, compared_versions(words)) == expected, words
        assert analyze(words + "\nRuntimeError: boom").environment.sglang_version == expected, words


def test_an_upgraded_release_gets_its_own_pins_not_the_old_ones(assistant):
    answer = assistant.answer(
        "Upgraded our image from sglang 0.5.6 to 0.5.9 with pip install --no-deps sglang==0.5.9; now it fails:\n"
        "ImportError: cannot import name 'sgl_per_token_group_quant_8bit' from 'sgl_kernel'")
    assert answer.detected.sglang_version == "0.5.9"
    assert answer.release_change is not None and answer.release_change.newer == "0.5.9"
    assert "sgl-kernel==0.3.21" in answer.text and "pins sgl-kernel==0.3.18" not in answer.text


def test_an_env_var_sglang_never_reads_is_pointed_at_the_flag_it_meant(assistant):
    answer = assistant.answer("export SGLANG_DISABLE_CUDA_GRAPH=1\nsglang 0.5.6\n"
                              "OSError: [Errno 98] Address already in use")
    assert any("SGLANG_DISABLE_CUDA_GRAPH" in w and w.endswith("Use --disable-cuda-graph instead.")
               for w in answer.warnings)
