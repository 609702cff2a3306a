"""Symbol history: which SGLang releases have the module, name, attribute or parameter an error misses.

The build test reads two small real release wheels from the cache (skipped when they are not
cached); the others use the committed kb/sglang_symbols.json.gz. Every release fact asserted
here was checked in the release sources (git -C /work/sglang-src grep ... v0.X.Y).
"""

from __future__ import annotations

import time

import pytest

from assistant.symbols import DEFAULT_PATH, SymbolRegistry, describe_releases, symbol_history
from ingest.wheels import DEFAULT_CACHE_DIR, cached_wheel

GET_IP = ("ImportError: cannot import name 'get_ip' from 'sglang.srt.utils' "
          "(/usr/local/lib/python3.10/dist-packages/sglang/srt/utils/__init__.py)")  # fmt: skip


@pytest.fixture(scope="module")
def small_registry(tmp_path_factory):
    if not all(cached_wheel(v, DEFAULT_CACHE_DIR) for v in ("0.4.0", "0.4.1")):
        pytest.skip("sglang 0.4.0/0.4.1 wheels are not cached")
    from ingest.sglang_symbols import main

    out_dir = tmp_path_factory.mktemp("kb")
    assert main(["--versions", "0.4.0", "0.4.1", "--out-dir", str(out_dir)]) == 0
    return SymbolRegistry.load(out_dir / "sglang_symbols.json.gz")


def test_build_from_real_wheels_tells_the_two_releases_apart(small_registry):
    assert small_registry.releases == ["0.4.0", "0.4.1"]
    assert small_registry.summary["modules"] > 150 and small_registry.summary["classes"] > 100
    # 0.4.1 moved fused_moe_triton under layers/moe/ and added expert parallelism.
    moved = symbol_history(["ModuleNotFoundError: No module named 'sglang.srt.layers.fused_moe_triton'"],
                           user_version="0.4.1", registry=small_registry)  # fmt: skip
    assert moved.kind == "module" and moved.releases == ("0.4.0",) and moved.in_user_version is False
    assert 'pip install "sglang==0.4.0"' in moved.advice()
    added = symbol_history(["ModuleNotFoundError: No module named 'sglang.srt.layers.moe.ep_moe'"],
                           registry=small_registry)  # fmt: skip
    assert added.releases == ("0.4.1",)
    # A dataclass field is a constructor parameter: enable_ep_moe is new in 0.4.1's ServerArgs.
    ep_moe = symbol_history(["TypeError: ServerArgs.__init__() got an unexpected keyword argument 'enable_ep_moe'"],
                            user_version="0.4.0", registry=small_registry)  # fmt: skip
    assert ep_moe.kind == "parameter" and ep_moe.releases == ("0.4.1",) and ep_moe.in_user_version is False
    # A class from a module only 0.4.1 has; get_ip was not in sglang.srt.utils yet in either.
    rwlock = symbol_history(["ImportError: cannot import name 'RWLock' from 'sglang.srt.aio_rwlock'"],
                            registry=small_registry)  # fmt: skip
    assert rwlock.releases == ("0.4.1",)
    assert symbol_history([GET_IP], registry=small_registry).releases == ()


@pytest.fixture(scope="module")
def registry():
    if not DEFAULT_PATH.exists():
        pytest.skip("kb/sglang_symbols.json.gz not built")
    return SymbolRegistry.load()


def test_a_name_that_was_removed_says_which_release_to_install(registry):
    # def get_ip in sglang/srt/utils.py from v0.4.2 through v0.5.2; no release from v0.5.3 on has it.
    history = symbol_history(["Traceback (most recent call last):", GET_IP], user_version="0.5.6.post2")
    assert history.kind == "name" and history.owner == "sglang.srt.utils" and history.name == "get_ip"
    assert history.releases[0] == "0.4.2" and history.releases[-1] == "0.5.2"
    assert history.in_user_version is False
    assert history.summary().startswith("`get_ip` can be imported from `sglang.srt.utils` in SGLang 0.4.2–0.5.2 "
                                        "(not from 0.5.3 on)")  # fmt: skip
    assert 'pip install "sglang==0.5.2"' in history.advice()


def test_a_module_added_later_asks_for_an_upgrade(registry):
    # sglang/srt/weight_sync/ first ships in v0.4.10 (a folder without __init__.py).
    history = symbol_history(["ModuleNotFoundError: No module named 'sglang.srt.weight_sync'"], user_version="0.4.6")
    assert history.kind == "module" and history.releases[0] == "0.4.10" and history.releases[-1] == "0.5.23"
    assert history.summary().startswith("`sglang.srt.weight_sync` exists from SGLang 0.4.10 on")
    assert "Upgrade SGLang to >= 0.4.10" in history.advice()


def test_a_model_architecture_newer_than_the_users_release_asks_for_the_release_that_has_it(registry):
    # sglang/srt/models/qwen3_next.py first ships in v0.5.2
    line = ("ValueError: Qwen3NextForCausalLM has no SGlang implementation and the Transformers "
            "implementation is not compatible with SGLang.")
    old = symbol_history([line], user_version="0.4.10")
    assert old.kind == "model" and old.releases[0] == "0.5.2" and old.in_user_version is False
    assert 'pip install -U "sglang>=0.5.2"' in old.advice()
    # a release that has it: the model's code failed to import, no upgrade helps
    current = symbol_history([line], user_version="0.5.5")
    assert current.in_user_version is True and "Ignore import error when loading" in current.advice()
    # vLLM prints the same words about its own registry
    assert symbol_history(["Model architectures ['Qwen3NextForCausalLM'] are not supported for now. "
                           "Supported architectures: dict_keys(['LlamaForCausalLM'])  vllm/model_executor"]) is None


def test_names_re_exported_by_a_star_import_count(registry):
    # From v0.5.3 sglang/srt/utils/__init__.py does `from sglang.srt.utils.common import *`.
    history = symbol_history(["AttributeError: module 'sglang.srt.utils' has no attribute 'is_hip'"],
                             user_version="0.5.9")  # fmt: skip
    assert len(history.releases) == len(registry.releases) and history.in_user_version is True
    assert "another copy" in history.advice()  # the user's release has it: a second install shadows it


def test_class_attributes_enum_members_and_missing_ones(registry):
    # ForwardMode.DUMMY_FIRST = auto() exists up to v0.5.3 and is gone in v0.5.4.
    member = symbol_history(["AttributeError: type object 'ForwardMode' has no attribute 'DUMMY_FIRST'"],
                            user_version="0.5.4")  # fmt: skip
    assert member.kind == "attribute" and member.releases[-1] == "0.5.3" and member.in_user_version is False
    # No release's ScheduleBatch has `sample`: the caller was written against a fork.
    missing = symbol_history(["  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 9",
                              "AttributeError: 'ScheduleBatch' object has no attribute 'sample'"])  # fmt: skip
    assert missing.releases == () and missing.known
    assert "fork or an unreleased development build" in missing.summary()
    # self.X assigned in a method is an attribute.
    assert symbol_history(["AttributeError: 'ScheduleBatch' object has no attribute 'reqs'"]).releases
    # A layer's `weight` is registered at run time by the quantization method: no claim that no
    # release has it (a checkpoint that stores `weight_packed` raises this, not a fork)
    assert symbol_history(["AttributeError: 'ReplicatedLinear' object has no attribute 'weight'"]) is None


def test_keyword_arguments_of_functions_dataclasses_and_engine(registry):
    # broadcast_pyobj gained `src: int = 0` in v0.4.2.
    src = symbol_history(["TypeError: broadcast_pyobj() got an unexpected keyword argument 'src'"], user_version="0.4.1")
    assert src.kind == "parameter" and src.releases[0] == "0.4.2" and src.in_user_version is False
    assert src.accepts_any_keyword is False
    # ServerArgs.enable_ep_moe: a dataclass field from v0.4.1 to v0.5.2.
    ep_moe = symbol_history(["TypeError: ServerArgs.__init__() got an unexpected keyword argument 'enable_ep_moe'"],
                            user_version="0.5.6")  # fmt: skip
    assert ep_moe.releases[0] == "0.4.1" and ep_moe.releases[-1] == "0.5.2" and ep_moe.in_user_version is False
    assert 'pip install "sglang==0.5.2"' in ep_moe.advice()
    # Engine(**kwargs) hands every keyword to ServerArgs; from v0.5.20 ServerArgs is assembled from
    # namespace classes (exec_.py ExecFeatures.enable_memory_saver), first a field in v0.4.2.
    saver = symbol_history(["TypeError: Engine.__init__() got an unexpected keyword argument 'enable_memory_saver'",
                            "sglang.srt.entrypoints.engine"], user_version="0.4.1")  # fmt: skip
    assert saver.releases[0] == "0.4.2" and saver.releases[-1] == "0.5.23"


def test_lines_that_are_not_about_sglang_give_nothing(registry):
    assert symbol_history(["ImportError: cannot import name 'x' from 'transformers'"]) is None
    assert symbol_history(["ModuleNotFoundError: No module named 'sglang'"]) is None  # not installed at all
    # LMCacheLayerwiseConnector is LMCache's class (SGLang only calls it): not an SGLang symbol.
    assert symbol_history(["TypeError: LMCacheLayerwiseConnector.__init__() missing 1 required positional "
                           "argument: 'config_file'"]) is None  # fmt: skip
    # `Engine` alone is too generic to claim without sglang in the paste.
    assert symbol_history(["TypeError: Engine.__init__() got an unexpected keyword argument 'foo'"]) is None


def test_release_ranges_are_described_with_their_gaps():
    everything = ("0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.5.1", "0.5.2", "0.5.3")
    assert describe_releases(("0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.5.1", "0.5.2"), everything) == \
        "in SGLang 0.4.3–0.5.2 (not from 0.5.3 on)"
    assert describe_releases(("0.4.4", "0.4.5", "0.5.2", "0.5.3"), everything) == "in SGLang 0.4.4–0.4.5 and 0.5.2–0.5.3"


def test_lookups_are_fast_after_one_load(registry):
    lines = ["TypeError: ServerArgs.__init__() got an unexpected keyword argument 'enable_dp_attention'",
             "sglang/srt/server_args.py"]  # fmt: skip
    symbol_history(lines, user_version="0.5.6")
    started = time.perf_counter()
    for _ in range(20):
        symbol_history(lines, user_version="0.5.6")
        symbol_history([GET_IP], user_version="0.5.6")
    assert (time.perf_counter() - started) / 40 < 0.005
