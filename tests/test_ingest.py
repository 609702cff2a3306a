"""Ingest: documents chunked with code blocks and tracebacks whole, incremental re-embedding,
atomic swaps, and clear errors for corrupt or mismatched indexes."""

import json
import shutil

import pytest

from assistant.config import Settings
from assistant.errors import IndexError_, IndexMismatch, IndexMissing
from assistant.index import Index
from ingest.build import build_index
from ingest.update import ingest_kb
from ingest.documents import document_units, split_text
from tests.conftest import REPO, run_ask

TRACEBACK = """Traceback (most recent call last):
  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2100, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
  File "/sgl/python/sglang/srt/model_executor/model_runner.py", line 215, in __init__
    self.init_memory_pool(min_per_gpu_memory)
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."""


def test_tracebacks_and_code_blocks_are_never_cut():
    text = ("Intro paragraph.\n\n" + "filler line\n" * 80 + "\n" + TRACEBACK + "\n\nMore prose.\n\n```bash\n"
            + "echo step\n" * 120 + "```\n\nEnd.")
    chunks = split_text(text, limit=400)
    assert any(TRACEBACK in c for c in chunks)
    fenced = [c for c in chunks if "```bash" in c]
    assert len(fenced) == 1 and fenced[0].count("echo step") == 120


def test_document_folders_markdown_text_html_chinese(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "oom.md").write_text("# 显存不足怎么办\n\n启动时报错:\n\n```\n" + TRACEBACK + "\n```\n\n调大 mem fraction。\n")
    (docs / "notes.txt").write_text("Port clash notes\n\n" + TRACEBACK)
    (docs / "page.html").write_text("<html><body><h1>NCCL hang</h1><p>Set GLOO_SOCKET_IFNAME.</p>"
                                    "<pre>Init torch distributed begin.</pre><script>x()</script></body></html>")
    (docs / "blob.bin.txt").write_bytes(b"\0\1\2binary")
    units = {u.id: u for u in document_units(docs)}
    assert set(units) == {"doc:oom.md", "doc:notes.txt", "doc:page.html"}
    assert units["doc:oom.md"].title == "显存不足怎么办"
    assert any(TRACEBACK in c for c in units["doc:oom.md"].chunks)
    html = "\n".join(units["doc:page.html"].chunks)
    assert "```" in html and "Init torch distributed begin." in html and "x()" not in html


@pytest.fixture
def small_kb(tmp_path):
    root = tmp_path / "kb"
    (root / "entries").mkdir(parents=True)
    for name in ("flashinfer-jit-missing-cuda-fp8-h", "tp-memory-capacity-unbalanced", "libnuma-missing-sgl-kernel"):
        shutil.copy(REPO / "kb" / "entries" / f"{name}.md", root / "entries")
    return root


def test_reingest_of_unchanged_content_embeds_nothing(small_kb):
    settings = Settings.from_env({"ASK_KB_DIR": str(small_kb)})
    first = ingest_kb(settings, progress=False)
    assert first.embedded == first.chunks > 0
    second = ingest_kb(settings, progress=False)
    assert second.embedded == 0 and second.reused == first.chunks
    manifest = json.loads((small_kb / "index" / "manifest.json").read_text())
    assert manifest["format"] == 1 and manifest["dim"] == 384 and manifest["onnx"] is True
    assert set(manifest["units"]) == {"flashinfer-jit-missing-cuda-fp8-h", "tp-memory-capacity-unbalanced",
                                      "libnuma-missing-sgl-kernel"}
    # one entry changes, one is removed: only the changed one is embedded again
    entry = small_kb / "entries" / "libnuma-missing-sgl-kernel.md"
    entry.write_text(entry.read_text().replace("cause: >", "cause: >\n  Extra sentence for the test.", 1))
    (small_kb / "entries" / "tp-memory-capacity-unbalanced.md").unlink()
    third = ingest_kb(settings, progress=False)
    assert third.embedded == 1 and third.removed_units == 1
    assert "tp-memory-capacity-unbalanced" not in Index.load(small_kb / "index").unit_by_id


def test_reingest_leaves_an_unchanged_index_alone_and_mends_a_damaged_one(small_kb):
    settings = Settings.from_env({"ASK_KB_DIR": str(small_kb)})
    ingest_kb(settings, progress=False)
    index = small_kb / "index"
    manifest = (index / "manifest.json").read_text()
    again = ingest_kb(settings, progress=False)
    assert again.embedded == 0 and again.reused == again.chunks
    assert (index / "manifest.json").read_text() == manifest   # not rewritten: same build time
    # a file damaged after the build: `ask ingest` (the command every index error names) mends it
    (index / "vectors.faiss").write_bytes(b"garbage")
    with pytest.raises(IndexError_, match="corrupt"):
        Index.load(index)
    mended = ingest_kb(settings, progress=False)
    assert mended.embedded == mended.chunks
    assert len(Index.load(index).units) == 3
    result = run_ask("--no-llm", "--json", "ImportError: libnuma.so.1: cannot open shared object file", kb=small_kb)
    assert json.loads(result.stdout)["matches"][0]["id"] == "libnuma-missing-sgl-kernel"


class _Interrupted(Exception):
    pass


class _DiesAfterFirstBatch:
    """An encoder that is interrupted mid-build, like Ctrl-C during embedding."""

    dim = 384

    def encode(self, texts):
        raise _Interrupted()


def test_interrupted_build_leaves_the_previous_index_usable(small_kb):
    settings = Settings.from_env({"ASK_KB_DIR": str(small_kb)})
    ingest_kb(settings, progress=False)
    before = (small_kb / "index" / "manifest.json").read_text()
    from ingest import collect_units
    from ingest.documents import Unit

    units = collect_units(small_kb / "entries") + [Unit("new-unit", "doc", "New", ["brand new text"])]
    with pytest.raises(_Interrupted):
        build_index(small_kb / "index", units, settings.embed_model, progress=False, encoder=_DiesAfterFirstBatch())
    assert (small_kb / "index" / "manifest.json").read_text() == before
    assert len(Index.load(small_kb / "index").units) == 3
    assert not [p for p in small_kb.iterdir() if ".tmp-" in p.name]


def test_missing_corrupt_and_mismatched_index_errors(small_kb):
    with pytest.raises(IndexMissing, match="ask ingest"):
        Index.load(small_kb / "index")
    ingest_kb(Settings.from_env({"ASK_KB_DIR": str(small_kb)}), progress=False)
    with pytest.raises(IndexMismatch, match="ask ingest"):
        Index.load(small_kb / "index", model="some/other-model")
    manifest = json.loads((small_kb / "index" / "manifest.json").read_text())
    (small_kb / "index" / "manifest.json").write_text(json.dumps(manifest | {"format": 99}))
    with pytest.raises(IndexMismatch, match="format 99"):
        Index.load(small_kb / "index")
    (small_kb / "index" / "manifest.json").write_text(json.dumps(manifest))
    (small_kb / "index" / "vectors.faiss").write_bytes(b"garbage")
    with pytest.raises(IndexError_, match="corrupt"):
        Index.load(small_kb / "index")
    result = run_ask("--no-llm", "RuntimeError: Not enough memory.", kb=small_kb)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "ask ingest" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_first_ask_without_an_index_builds_it(small_kb):
    result = run_ask("--json", "ImportError: libnuma.so.1: cannot open shared object file", kb=small_kb)
    assert result.returncode == 0, result.stderr.decode()
    assert b"building it" in result.stderr
    assert json.loads(result.stdout)["matches"][0]["id"] == "libnuma-missing-sgl-kernel"


def test_ingest_embeds_with_the_openvino_int8_model_close_to_the_reference(small_kb, tmp_path, monkeypatch):
    """On a CPU with int8 dot-product instructions ingest quantizes the export for OpenVINO once and
    embeds with it; the stored vectors stay within cosine 0.99 of sentence-transformers'. On a CPU
    without them, or without OpenVINO, the same build embeds with onnxruntime's int8 copy instead
    (faster there), still close to the reference."""
    import shutil

    import ingest.build
    from assistant.embed import SentenceTransformerEncoder
    from ingest.openvino_encoder import OPENVINO_FILES

    def stored_against_reference(index_dir):
        index = Index.load(index_dir)
        stored = index.vectors.reconstruct_n(0, index.vectors.ntotal)
        texts = [index.chunk_text(row) for row in range(index.vectors.ntotal)]
        return (stored * SentenceTransformerEncoder().encode(texts)).sum(axis=1)

    # this test's machine may lack VNNI: the OpenVINO path is checked for its vectors, not its speed
    monkeypatch.setattr(ingest.build, "int8_dot_product_cpu", lambda: True)
    stats = ingest_kb(Settings.from_env({"ASK_KB_DIR": str(small_kb)}), progress=False)
    assert all((small_kb / "index" / name).exists() for name in OPENVINO_FILES)
    assert stats.embedded == stats.chunks
    assert stored_against_reference(small_kb / "index").min() >= 0.99

    for name, patch in (("no-vnni", ("int8_dot_product_cpu", lambda: False)),
                        ("no-openvino", ("openvino_available", lambda: False))):
        without = tmp_path / f"kb-{name}"
        shutil.copytree(small_kb / "entries", without / "entries")
        monkeypatch.setattr(ingest.build, "int8_dot_product_cpu", lambda: True)
        monkeypatch.setattr(ingest.build, *patch)
        rebuilt = ingest_kb(Settings.from_env({"ASK_KB_DIR": str(without)}), progress=False)
        assert not any((without / "index" / name).exists() for name in OPENVINO_FILES)
        assert rebuilt.embedded == rebuilt.chunks
        assert stored_against_reference(without / "index").min() >= 0.98


def test_int8_dot_product_cpu_is_read_from_the_cpu_flags(tmp_path):
    from ingest.openvino_encoder import int8_dot_product_cpu

    zen3 = tmp_path / "zen3"
    zen3.write_text("processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma bmi2 sha_ni vaes\n")
    icelake = tmp_path / "icelake"
    icelake.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni avx512_bf16\n")
    assert not int8_dot_product_cpu(zen3)
    assert int8_dot_product_cpu(icelake)
    assert not int8_dot_product_cpu(tmp_path / "missing")   # not Linux: onnxruntime's copy


def test_onnx_query_vectors_match_sentence_transformers(small_kb, tmp_path):
    import shutil

    from assistant.embed import INGEST_ONNX_FILE, OnnxQueryEncoder, SentenceTransformerEncoder

    ingest_kb(Settings.from_env({"ASK_KB_DIR": str(small_kb)}), progress=False)
    texts = ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.63 GiB",
             "NCCL error: unhandled system error", "显存不足 启动失败", "x" * 3000]
    reference = SentenceTransformerEncoder().encode(texts)
    # queries run the index's int8 encoder: the same vectors as the reference model, nearly
    assert (small_kb / "index" / INGEST_ONNX_FILE).exists()
    fast = OnnxQueryEncoder(small_kb / "index").encode(texts)
    assert (fast * reference).sum(axis=1).min() > 0.98
    # an index without the int8 copy queries with the float export: the reference's own vectors
    float_only = tmp_path / "float-index"
    shutil.copytree(small_kb / "index", float_only)
    (float_only / INGEST_ONNX_FILE).unlink()
    exact = OnnxQueryEncoder(float_only).encode(texts)
    assert (exact * reference).sum(axis=1).min() > 1 - 1e-4


def test_an_entry_added_after_the_index_was_built_answers_at_once(small_kb):
    """An operator who adds or edits an entry in their own KB gets it on the next question, without
    remembering `ask ingest`; the stderr line says the index was brought up to date."""
    line = "ImportError: libnvshmem_host.so.3: cannot open shared object file"
    first = run_ask("--no-llm", "--json", line, kb=small_kb)
    assert first.returncode in (0, 3)
    assert "changed since" not in first.stderr.decode()
    source = (small_kb / "entries" / "libnuma-missing-sgl-kernel.md").read_text()
    added = (source.replace("id: libnuma-missing-sgl-kernel", "id: nvshmem-host-library-missing")
             .replace('"ImportError: libnuma.so.1: cannot open shared object file"', f'"{line}"'))
    (small_kb / "entries" / "nvshmem-host-library-missing.md").write_text(added)
    second = run_ask("--no-llm", "--json", line, kb=small_kb)
    assert "changed since its index was built" in second.stderr.decode()
    assert json.loads(second.stdout)["matches"][0]["id"] == "nvshmem-host-library-missing"
    third = run_ask("--no-llm", "--json", line, kb=small_kb)   # up to date now: no second rebuild
    assert "changed since" not in third.stderr.decode()


def test_an_index_updated_in_place_holds_the_vectors_of_a_fresh_build(small_kb, tmp_path):
    """Adding an entry re-embeds only its chunks; those vectors, and every other, must be the ones
    a fresh build of the same KB makes. Otherwise the same KB answers differently on a user's
    updated index and on a clean install."""
    settings = Settings.from_env({"ASK_KB_DIR": str(small_kb)})
    ingest_kb(settings, progress=False)
    for name in ("cuda-graph-capture-failed", "docker-shm-nccl-unhandled-system-error"):
        shutil.copy(REPO / "kb" / "entries" / f"{name}.md", small_kb / "entries")
    updated = ingest_kb(settings, progress=False)
    assert 0 < updated.embedded < updated.chunks
    fresh_kb = tmp_path / "fresh"
    shutil.copytree(small_kb / "entries", fresh_kb / "entries")
    ingest_kb(Settings.from_env({"ASK_KB_DIR": str(fresh_kb)}), progress=False)

    def vectors(index_dir):
        index = Index.load(index_dir)
        stored = index.vectors.reconstruct_n(0, index.vectors.ntotal)
        return {index.chunk_text(row): stored[row] for row in range(index.vectors.ntotal)}

    in_place, fresh = vectors(small_kb / "index"), vectors(fresh_kb / "index")
    assert in_place.keys() == fresh.keys()
    assert max(abs(in_place[t] - fresh[t]).max() for t in fresh) < 1e-6
