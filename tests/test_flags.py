"""Tests of the SGLang flag / env-var registry: the query module on the committed
kb/sglang_flags.json, and the builder's extraction on a tiny synthetic wheel (no network)."""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

import pytest

from assistant.flags import (
    CURATED_RENAMES,
    DEFAULT_PATH,
    OUT_OF_SCOPE_NOTE,
    FlagRegistry,
    find_names,
)
from ingest.sglang_flags import extract_from_wheel

REPO_ROOT = Path(__file__).resolve().parent.parent

REQUIRED_VERSIONS = ["0.4.1", "0.4.5", "0.4.6", "0.5.1", "0.5.5", "0.5.6", "0.5.9"]


@pytest.fixture(scope="module")
def registry() -> FlagRegistry:
    return FlagRegistry.load()


def test_registry_file_is_the_committed_one_and_covers_required_releases(
    registry: FlagRegistry,
) -> None:
    assert DEFAULT_PATH == REPO_ROOT / "kb" / "sglang_flags.json"
    data = json.loads(DEFAULT_PATH.read_text())
    assert data["format"] == 1
    assert set(REQUIRED_VERSIONS) <= set(registry.versions)
    assert registry.latest == registry.versions[-1]
    assert registry.versions == sorted(
        registry.versions, key=lambda v: tuple(map(int, v.split(".")))
    )
    for entry in data["versions"].values():
        assert entry["flags"] == sorted(entry["flags"])
        assert "--tp-size" in entry["flags"]


def test_enable_ep_moe_exists_only_in_older_releases(registry: FlagRegistry) -> None:
    status = registry.check("--enable-ep-moe")
    assert status.exists
    assert "0.4.1" in status.versions and "0.4.6" in status.versions
    assert registry.latest not in status.versions
    latest = registry.check("--enable-ep-moe", registry.latest)
    assert not latest.exists
    assert latest.replacement == "--ep-size N"
    assert "0.4.1" in latest.note and "--ep-size" in latest.note
    assert (
        registry.check("--enable-ep-moe", "0.4.6").replacement is None
    )  # still the way to do it there


@pytest.mark.parametrize(
    "name", ["--disable-memory-balance-check", "SGLANG_DISABLE_FP8", "--enable-reasoning"]
)
def test_invented_names_exist_nowhere(registry: FlagRegistry, name: str) -> None:
    status = registry.check(name)
    assert not status.exists
    assert status.versions == ()
    assert "no SGLang release" in status.note
    assert not any(registry.check(name, version).exists for version in registry.versions)


def test_tp_and_dp_are_argparse_abbreviations(registry: FlagRegistry) -> None:
    for version in registry.versions:
        status = registry.check("--tp", version)
        assert status.exists and status.canonical == "--tp-size", version
    dp = registry.check("--dp", "0.5.9")
    assert dp.exists and dp.canonical == "--dp-size"
    assert "abbreviation" in dp.note


def test_ambiguous_prefix_is_rejected(registry: FlagRegistry) -> None:
    status = registry.check("--enable", "0.5.9")
    assert not status.exists
    assert "ambiguous" in status.note


def test_exact_match_beats_longer_flags(registry: FlagRegistry) -> None:
    # --disable-cuda-graph is also a prefix of --disable-cuda-graph-padding: exact wins.
    status = registry.check("--disable-cuda-graph", "0.5.9")
    assert status.exists and status.canonical == "--disable-cuda-graph"


def test_underscore_spelling_is_rejected_with_dashed_replacement(registry: FlagRegistry) -> None:
    status = registry.check("--reasoning_parser", "0.5.9")
    assert not status.exists
    assert status.replacement == "--reasoning-parser"
    assert registry.check("--reasoning_parser").replacement == "--reasoning-parser"


def test_value_written_with_the_name_is_ignored(registry: FlagRegistry) -> None:
    assert registry.check("--tp-size=4", "0.5.9").exists
    assert registry.check("SGLANG_ENABLE_JIT_DEEPGEMM=1", "0.5.9").exists


def test_tp_memory_imbalance_env_rename(registry: FlagRegistry) -> None:
    old = "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK"
    for version in registry.versions_in(">=0.4.6,<=0.5.6"):
        assert registry.check(old, version).exists, version
    in_059 = registry.check(old, "0.5.9")
    assert not in_059.exists
    assert in_059.replacement == "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=false"
    assert registry.check("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "0.5.9").exists


def test_legacy_sgl_prefix_gets_sglang_replacement(registry: FlagRegistry) -> None:
    status = registry.check("SGL_ENABLE_JIT_DEEPGEMM", registry.latest)
    assert not status.exists
    assert status.replacement == "SGLANG_ENABLE_JIT_DEEPGEMM"
    assert registry.check("SGL_ENABLE_JIT_DEEPGEMM", "0.4.6").exists


def test_other_software_env_vars_are_not_checked(registry: FlagRegistry) -> None:
    for name in ["NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "MC_TE_METRIC", "PYTORCH_CUDA_ALLOC_CONF"]:
        status = registry.check(name, "0.5.9")
        assert status.exists and status.kind == "env" and status.note == OUT_OF_SCOPE_NOTE


def test_deepep_mode_appears_in_045(registry: FlagRegistry) -> None:
    status = registry.check("--deepep-mode")
    assert status.versions[0] == "0.4.5"
    assert registry.check("--deepep-mode", "0.4.5").exists
    assert not registry.check("--deepep-mode", "0.4.1").exists


def test_disable_cuda_graph_is_deprecated_in_latest(registry: FlagRegistry) -> None:
    status = registry.check("--disable-cuda-graph", registry.latest)
    assert status.exists and status.deprecated
    assert status.replacement.startswith("--cuda-graph-backend-decode disabled")


@pytest.mark.parametrize("old", sorted(CURATED_RENAMES))
def test_curated_renames_agree_with_the_data(registry: FlagRegistry, old: str) -> None:
    rename = CURATED_RENAMES[old]
    required = registry.check(rename.requires)
    assert required.versions, f"{rename.requires} is in no release"
    assert required.versions[0] == rename.since, (
        f"{rename.requires} first appears in {required.versions[0]}"
    )
    assert set(required.versions) >= set(registry.versions_in(f">={rename.since}"))
    in_latest = registry.check(old, registry.latest)
    assert not in_latest.exists or in_latest.deprecated
    assert in_latest.replacement == rename.replacement
    assert registry.check(old).versions, f"{old} is in no release: nothing to rename"


def test_nearest_maps_user_versions(registry: FlagRegistry) -> None:
    assert registry.nearest("0.4.6.post2") == "0.4.6"
    assert registry.nearest("v0.5.6rc1") == "0.5.6"
    assert registry.nearest("sglang==0.5.9") == "0.5.9"
    assert registry.nearest("0.1.0") == registry.versions[0]
    assert registry.nearest("99.0") == registry.latest
    assert registry.nearest(None) is None
    assert registry.nearest("latest please") is None
    between = registry.nearest("0.5.11")
    assert between in registry.versions and tuple(map(int, between.split("."))) <= (0, 5, 11)


def test_versions_in(registry: FlagRegistry) -> None:
    selected = registry.versions_in(">=0.4.6,<0.5.9")
    assert "0.4.6" in selected and "0.5.6" in selected
    assert "0.4.5" not in selected and "0.5.9" not in selected
    assert registry.versions_in(None) == registry.versions_in("any") == registry.versions
    assert registry.versions_in(">=v0.5.9") == registry.versions_in(">=0.5.9")
    with pytest.raises(ValueError, match="PEP 440"):
        registry.versions_in(">>0.5")


def test_find_names_in_a_launch_command() -> None:
    text = (
        "SGL_ENABLE_JIT_DEEPGEMM=1 NCCL_DEBUG=INFO python -m sglang.launch_server "
        "--model-path deepseek-ai/DeepSeek-V3 --tp 8 --enable-ep-moe "
        "--reasoning_parser deepseek-r1 --mem-fraction-static=0.85 --tp 8 "
        "# see https://x.org/a--b and ---- rules; SGLANG_DISABLE_FP8"
    )
    assert find_names(text) == [
        "SGL_ENABLE_JIT_DEEPGEMM",
        "--model-path",
        "--tp",
        "--enable-ep-moe",
        "--reasoning_parser",
        "--mem-fraction-static",
        "SGLANG_DISABLE_FP8",
    ]


def test_check_many_keeps_order(registry: FlagRegistry) -> None:
    statuses = registry.check_many(["--tp", "SGLANG_DISABLE_FP8"], "0.5.9")
    assert [s.name for s in statuses] == ["--tp", "SGLANG_DISABLE_FP8"]
    assert [s.exists for s in statuses] == [True, False]


def _top_level_imports(path: Path) -> set[str]:
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    return imported


def test_query_module_imports_only_stdlib_and_packaging() -> None:
    stdlib = {"__future__", "json", "re", "functools", "dataclasses", "pathlib", "collections",
              "hashlib", "importlib", "os", "shutil", "gzip", "typing", "collections.abc"}
    allowed = stdlib | {"packaging"}
    # the registry is found through assistant.resources (checkout or installed package), which
    # itself stays light: stdlib, packaging, platformdirs
    imported = _top_level_imports(REPO_ROOT / "assistant" / "flags.py")
    assert {m.split(".")[0] for m in imported - {"assistant.resources", "assistant.wording"}} <= allowed
    # its notes carry their Chinese version (assistant.wording), which imports nothing of its own
    assert {m.split(".")[0] for m in _top_level_imports(REPO_ROOT / "assistant" / "wording.py")} <= stdlib
    resources = _top_level_imports(REPO_ROOT / "assistant" / "resources.py")
    assert {m.split(".")[0] for m in resources - {"assistant.errors"}} <= allowed | {"platformdirs"}


def test_registry_from_a_given_file_honours_allow_abbrev(tmp_path: Path) -> None:
    release = {"flags": ["--help", "--tp-size"], "env_vars": [], "legacy_env_vars": []}
    data = {
        "format": 1,
        "versions": {"1.0.0": release, "1.1.0": {**release, "allow_abbrev": False}},
    }
    path = tmp_path / "flags.json"
    path.write_text(json.dumps(data))
    registry = FlagRegistry.load(path)
    assert registry.versions == ["1.0.0", "1.1.0"]
    assert registry.check("--tp", "1.0.0").exists
    assert not registry.check("--tp", "1.1.0").exists
    with pytest.raises(FileNotFoundError, match="ingest.sglang_flags"):
        FlagRegistry.load(tmp_path / "missing.json")


# --------------------------------------------------------------------------- builder

SYNTHETIC_SERVER_ARGS = """
import argparse
from dataclasses import dataclass

from sglang.srt.arg_groups.arg_utils import A, Arg, add_cli_args_from_dataclass
from sglang.srt.arg_groups.fields import collect_input_fields
from sglang.srt.arg_groups.fields.parallel import Parallel
from sglang.srt.arg_groups.choices import ATTENTION_BACKENDS

_INPUT_NAMESPACES = [Parallel]
LOAD_FORMATS = ["auto", "safetensors"]


@dataclass
class ServerArgs:
    model_path: A[str, Arg(help="Model weights.", aliases=["--model"])]
    attention_backend: A[str, Arg(help="Attention kernels.", choices=ATTENTION_BACKENDS)] = "fa3"
    host: A[str, "The host."] = "127.0.0.1"
    hidden: A[bool, Arg(no_cli=True)] = False
    plain: int = 0
    renamed: A[int, Arg(help="Renamed.", cli_name="--new-name")] = 1
    toggle: A[bool, Arg(help="Toggle.", action=argparse.BooleanOptionalAction)] = True
    old_mode: A[bool, "Deprecated. Use --new-name 2 instead."] = False

    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
        parser.add_argument(
            "--old-flag",
            action=DeprecatedAction,
            help="'--old-flag' is deprecated. Please use '--host 0.0.0.0' instead.",
        )
        parser.add_argument("--grpc", action="store_true", help="Replaces the deprecated --old.")
        _add_more_args(parser)


def _add_more_args(parser):
    parser.add_argument("--extra", type=str)
    parser.add_argument("--load-format", choices=LOAD_FORMATS,
                        help=f"How to read the weights; {len(LOAD_FORMATS)} formats.")


def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return parser.parse_args(argv)


_annotations = collect_input_fields(_INPUT_NAMESPACES)
"""

SYNTHETIC_PARALLEL = """
import msgspec
from sglang.srt.arg_groups.arg_utils import A, Arg, Derived


class Parallel(msgspec.Struct):
    _NS_PATH = "parallel"
    dp_size: A[int, Arg(help="Data parallel size.", aliases=["--data-parallel-size"])] = 1
    tp_rank = Derived(doc="not a CLI input")
"""

SYNTHETIC_CHOICES = """
ATTENTION_BACKENDS = [
    "triton",
    "fa3",
]
"""

SYNTHETIC_ENVIRON = """
import os


class Envs:
    SGLANG_ALPHA = EnvBool(False)
    SGLANG_NEW = EnvBoolWithAlias(True, deprecated_name="SGLANG_OLD")


def _print_deprecated_env(new_name, old_name):
    if old_name in os.environ:
        os.environ[new_name] = os.environ[old_name]


_print_deprecated_env("SGLANG_NEW2", "SGL_OLD2")
for key in list(os.environ):
    if key.startswith("SGL_"):
        os.environ[key.replace("SGL_", "SGLANG_", 1)] = os.environ[key]
"""

SYNTHETIC_USER = """
import os

SGLANG_TP_RANK = None
x = envs.SGLANG_BETA.get()
y = os.getenv("SGL_LEGACY", "0")
prefix = f"SGLANG_{x}"
message = "SGLANG_TP_RANK is not registered; set SGLANG_DOC_ONLY=1 to debug, not SGLANG_XXX"
"""


def test_extract_from_synthetic_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "sglang-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("sglang/srt/server_args.py", SYNTHETIC_SERVER_ARGS)
        archive.writestr("sglang/srt/arg_groups/fields/parallel.py", SYNTHETIC_PARALLEL)
        archive.writestr("sglang/srt/arg_groups/choices.py", SYNTHETIC_CHOICES)
        archive.writestr("sglang/srt/environ.py", SYNTHETIC_ENVIRON)
        archive.writestr("sglang/srt/user.py", SYNTHETIC_USER)
        archive.writestr("sglang/README.md", "SGLANG_NOT_PYTHON=1")

    entry = extract_from_wheel(wheel)

    assert entry["flags"] == sorted([
        "--model-path", "--model", "--host", "--new-name", "--toggle", "--no-toggle", "--old-mode",
        "--tp-size", "--tensor-parallel-size", "--old-flag", "--grpc", "--extra",
        "--dp-size", "--data-parallel-size", "--help", "--attention-backend", "--load-format",
    ])  # fmt: skip
    assert entry["deprecated_flags"] == ["--old-flag", "--old-mode"]
    assert entry["flag_replacements"] == {
        "--old-flag": "--host 0.0.0.0",
        "--old-mode": "--new-name 2",
    }
    assert entry["allow_abbrev"] is True
    # Not env vars: SGLANG_TP_RANK (a Python global named in a message), SGLANG_XXX (a
    # placeholder), SGLANG_{x} (a fragment), SGLANG_NOT_PYTHON (not in a .py file).
    assert entry["env_vars"] == [
        "SGLANG_ALPHA",
        "SGLANG_BETA",
        "SGLANG_DOC_ONLY",
        "SGLANG_NEW",
        "SGLANG_NEW2",
        "SGLANG_OLD",
    ]
    assert entry["legacy_env_vars"] == ["SGL_LEGACY", "SGL_OLD2"]
    assert entry["deprecated_env_vars"] == {"SGLANG_OLD": "SGLANG_NEW", "SGL_OLD2": "SGLANG_NEW2"}
    assert entry["retired_env_vars"] == ["SGLANG_OLD", "SGL_OLD2"]
    assert entry["sgl_prefix_alias"] is True
    # help texts under the option's first long name (aliases share it), in one line; the holes an
    # f-string leaves stay holes; choices spelled out in the call, bound to a module-level name or
    # imported from another module
    assert entry["flag_help"]["--model-path"] == "Model weights."
    assert "--model" not in entry["flag_help"] and "--extra" not in entry["flag_help"]
    assert entry["flag_help"]["--host"] == "The host."
    assert entry["flag_help"]["--dp-size"] == "Data parallel size."
    assert entry["flag_help"]["--load-format"] == "How to read the weights; {} formats."
    assert entry["flag_choices"] == {"--attention-backend": ["triton", "fa3"],
                                     "--load-format": ["auto", "safetensors"]}


def test_only_the_newest_release_keeps_help_texts_every_release_its_choices(tmp_path: Path) -> None:
    from ingest.sglang_flags import build

    for version in ("9.8.0", "9.9.0"):
        with zipfile.ZipFile(tmp_path / f"sglang-{version}-py3-none-any.whl", "w") as archive:
            archive.writestr("sglang/srt/server_args.py", SYNTHETIC_SERVER_ARGS)
            archive.writestr("sglang/srt/arg_groups/fields/parallel.py", SYNTHETIC_PARALLEL)
    registry = build(["9.8.0", "9.9.0"], tmp_path)["versions"]
    assert "flag_help" not in registry["9.8.0"]
    # choices differ by release (a value one release rejects, another accepts): every release keeps them
    assert registry["9.8.0"]["flag_choices"] and registry["9.8.0"]["flag_choices"] == registry["9.9.0"]["flag_choices"]
    assert registry["9.9.0"]["flag_help"]["--host"] == "The host."
