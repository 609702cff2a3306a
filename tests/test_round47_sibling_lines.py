"""Entries completed with the other wordings SGLang prints for the same cause (round 47, issue 16):
a user who pastes the wording of another release, of another feature's import of the same package,
or of another optional package's "install X" message gets the entry's fix, not a lead or nothing."""

from __future__ import annotations

import pytest

CASES = [
    # HiCache L3 on Mooncake Store, 0.4.10-0.5.9: the two string pieces are joined without a space
    ("ImportError: Please install mooncake by following the instructions at "
     "https://kvcache-ai.github.io/Mooncake/getting_started/build.htmlto run SGLang with MooncakeConnector.\n",
     "mooncake-pip-missing-shared-lib"),
    # HiCache's NIXL storage backend imports the same nixl._api as the PD transfer backend
    ("ImportError: Please install NIXL by following the instructions at "
     "https://github.com/ai-dynamo/nixl/blob/main/README.md to use HiCacheNixl storage backend.\n",
     "nixl-not-installed"),
    # 0.5.7-0.5.9 only warn that tracing is off when the OpenTelemetry packages do not import
    ("[2025-11-02 10:00:00] Tracing is disabled because the packages cannot be imported.\n",
     "tracing-opentelemetry-missing-or-bad-otlp-endpoint"),
    # single-package features whose import SGLang wraps in its own "install X" message
    ("ImportError: Please install timm\n", "optional-feature-dependency-missing"),
    ("ImportError: accelerate is required for ModelOpt quantization. Please install it with: pip install accelerate\n",
     "optional-feature-dependency-missing"),
    ("ImportError: Breakable CUDA graph on NVIDIA requires the 'cuda-python' package. "
     "Install it with: pip install cuda-python\n",
     "optional-feature-dependency-missing"),
    ("ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=0.44.0.\n",
     "optional-feature-dependency-missing"),
]


@pytest.mark.parametrize("paste, entry", CASES)
def test_the_other_wording_of_a_known_cause_gets_its_fix(assistant, paste, entry):
    answer = assistant.answer(paste)
    assert answer.outcome == "fix"
    assert answer.matches[0].id == entry
