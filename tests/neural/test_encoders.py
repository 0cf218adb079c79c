"""The CPU backends of the encoders (mathir.neural): selection, export cache, agreement
with PyTorch, run identity, tokenising workers, and the error naming the extra."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from mathir.errors import InputError

pytest.importorskip("onnxruntime")
pytest.importorskip("sentence_transformers")

TEXTS = ["integration by parts $\\int x e^x dx$", "x",
         "Why is $e^{i\\pi} = -1$? Euler's formula gives the answer " * 6]


@pytest.fixture(scope="module")
def export_dir() -> Path:
    """Where the exports go: the run's folder (../../conftest.py sets MATHIR_EXPORT_DIR),
    which pytest-xdist's workers share, so that each export is made once per run."""
    return Path(os.environ["MATHIR_EXPORT_DIR"])


#: texts that calibrate the int8 OpenVINO exports here (mathir's: 300)
CALIBRATION = 32


@pytest.fixture
def few_calibration_texts(monkeypatch, tmp_path):
    """``openvino-int8`` exports calibrated on :data:`CALIBRATION` texts rather than 300
    (the bi-encoder's export: 44 CPU-seconds with 300, 9 with 16), in this test's folder:
    the shared export folder keeps only exports made as mathir makes them. The int8
    tolerances below hold either way; their figures at full size, calibrated as shipped,
    on real passages: ``benchmarks/cpu_backends.py`` (docs/neural.md, CPU backends)."""
    import mathir.neural.export as export_module
    from mathir.neural.calibration import calibration_texts

    where = export_module.export_dir
    monkeypatch.setattr(export_module, "calibration_texts",
                        lambda kind: calibration_texts(kind, n=CALIBRATION))
    monkeypatch.setattr(export_module, "export_dir", lambda model, backend, kind="bi-encoder":
                        tmp_path.joinpath("exports", *where(model, backend, kind).parts[-2:])
                        if backend == "openvino-int8" else where(model, backend, kind))


def _cos(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_backend_is_checked():
    from mathir.neural.backends import check_backend

    assert check_backend(None) == "torch"
    with pytest.raises(InputError, match="unknown backend 'fp8'"):
        check_backend("fp8")
    from mathir.neural.bi_encoder import load_bi_encoder

    with pytest.raises(InputError, match="unknown backend"):
        load_bi_encoder(backend="fp8")


def test_onnx_backends_agree_with_torch():
    from mathir.neural.bi_encoder import load_bi_encoder

    ref = load_bi_encoder().encode(TEXTS)
    onnx = load_bi_encoder(backend="onnx")
    assert type(onnx.st).__name__ == "OnnxBiEncoder"
    assert "backend='onnx'" in repr(onnx) and "onnx_sha256=" in repr(onnx)
    assert _cos(onnx.encode(TEXTS), ref).min() > 0.99999
    int8 = load_bi_encoder(backend="onnx-int8")
    assert _cos(int8.encode(TEXTS), ref).min() > 0.95
    # queries are encoded in float32 (QUERY_BACKENDS), passages in int8
    assert _cos(int8.st.encode_queries(TEXTS), ref).min() > 0.99999
    assert _cos(int8.st.encode_docs(TEXTS), ref).min() < 0.99999
    assert onnx.st.onnx.exported.sha256 != int8.st.onnx.exported.sha256
    assert onnx.backend_key.startswith("-onnx-") and load_bi_encoder().backend_key == ""


@pytest.mark.slow  # exports and int8-calibrates a model per backend
def test_openvino_backends_agree_with_torch(few_calibration_texts, two_layer_minilm):
    pytest.importorskip("openvino")
    pytest.importorskip("nncf")
    from mathir.neural.bi_encoder import load_bi_encoder

    # MiniLM's first 2 layers of 6 (as test_cross_encoder_backends_agree): what is checked
    # (export, static int8, the tolerances) is the same at any depth; the full model's
    # agreement on real passages: benchmarks/records/cpu_backends-agreement.json.
    model = two_layer_minilm
    ref = load_bi_encoder(model).encode(TEXTS)
    f32 = load_bi_encoder(model, backend="openvino")
    assert "backend='openvino'" in repr(f32)
    assert f32.st.onnx.exported.runtime == "openvino"
    assert _cos(f32.encode(TEXTS), ref).min() > 0.99999
    int8 = load_bi_encoder(model, backend="openvino-int8")
    # static quantisation: activations as well as weights are 8-bit
    assert _cos(int8.encode(TEXTS), ref).min() > 0.95
    # queries are encoded by the float32 OpenVINO model (QUERY_BACKENDS)
    assert _cos(int8.st.encode_queries(TEXTS), ref).min() > 0.99999
    assert _cos(int8.st.encode_docs(TEXTS), ref).min() < 0.99999
    assert len({f32.st.onnx.exported.sha256, int8.st.onnx.exported.sha256,
                load_bi_encoder(model, backend="onnx").st.onnx.exported.sha256}) == 3
    assert int8.backend_key.startswith("-openvino-int8-")
    # the vectors do not depend on the batch a text is in (no per-batch quantisation)
    alone = np.concatenate([int8.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(alone, int8.encode(TEXTS), atol=1e-5)


def test_cli_backends_are_the_encoders_backends():
    from mathir import cli
    from mathir.neural.backends import BACKENDS

    assert cli.BACKEND_NAMES == tuple(BACKENDS)


def test_export_is_cached_and_reused(export_dir):
    from mathir.models import default_model_path
    from mathir.neural.export import export

    first = export(default_model_path(), "onnx")
    assert first.path.parent.parent == export_dir
    stamp = first.onnx_file.stat().st_mtime_ns
    again = export(default_model_path(), "onnx")
    assert again.path == first.path and again.onnx_file.stat().st_mtime_ns == stamp
    assert again.sha256 == first.sha256
    assert first.manifest["source"]["weights"]["model.safetensors"]["sha256"]


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_run_identity_differs_by_backend_and_records_the_export():
    from mathir.experiment.identity import pipeline_identity
    from mathir.pipelines import neural

    plain = pipeline_identity("dense", neural.dense, {})
    f32 = pipeline_identity("dense", neural.dense, {"backend": "onnx"})
    int8 = pipeline_identity("dense", neural.dense, {"backend": "onnx-int8"})
    assert "backend" not in plain
    assert f32 != int8 != plain
    sha = int8["backend"]["models"]["bi-encoder"]["onnx_sha256"]
    assert len(sha) == 64 and sha != f32["backend"]["models"]["bi-encoder"]["onnx_sha256"]
    # an int8 run's queries are encoded by the float32 export, which its identity records
    assert int8["backend"]["models"]["bi-encoder queries"] == \
        f32["backend"]["models"]["bi-encoder"]
    assert "bi-encoder queries" not in f32["backend"]["models"]


@pytest.mark.slow  # exports and int8-calibrates a model per backend
def test_cross_encoder_backends_agree(tmp_path, few_calibration_texts):
    import torch
    from sentence_transformers import CrossEncoder

    from mathir.models import default_model_path
    from mathir.pipelines.neural import CrossEncoderScorer

    # MiniLM's first 2 layers of 6 under a new one-logit head: what is checked (export,
    # int8, scores within the tolerances) is the same at any depth, at a third of the
    # cost; the full model on real pairs: benchmarks/cpu_backends.py --quality.
    torch.manual_seed(0)
    CrossEncoder(str(default_model_path()), num_labels=1, device="cpu",
                 config_kwargs={"num_hidden_layers": 2}).save_pretrained(str(tmp_path / "ce"))
    pairs = [("what is $x^2$", t) for t in TEXTS]
    ref = CrossEncoderScorer(tmp_path / "ce").model.predict(pairs)
    onnx = CrossEncoderScorer(tmp_path / "ce", backend="onnx")
    assert "backend='onnx'" in repr(onnx)
    np.testing.assert_allclose(onnx.model.predict(pairs), ref, atol=1e-4)
    int8 = CrossEncoderScorer(tmp_path / "ce", backend="onnx-int8").model.predict(pairs)
    assert np.abs(int8 - ref).max() < 0.05
    if importlib.util.find_spec("openvino") and importlib.util.find_spec("nncf"):
        ov = CrossEncoderScorer(tmp_path / "ce", backend="openvino")
        np.testing.assert_allclose(ov.model.predict(pairs), ref, atol=1e-4)
        ov8 = CrossEncoderScorer(tmp_path / "ce", backend="openvino-int8")
        assert np.abs(ov8.model.predict(pairs) - ref).max() < 0.05


def test_tokenising_workers_give_the_same_vectors():
    from sentence_transformers import SentenceTransformer

    from mathir.models import default_model_path
    from mathir.neural.tokenizing import st_tokenize, torch_encode

    st = SentenceTransformer(str(default_model_path()), device="cpu")
    texts = TEXTS * 4
    ref = st.encode(texts, batch_size=4)
    tok = st_tokenize(st)
    np.testing.assert_allclose(torch_encode(st, tok, texts, 4, 0), ref, atol=1e-5)
    np.testing.assert_allclose(torch_encode(st, tok, texts, 4, 2), ref, atol=1e-5)


@pytest.mark.parametrize("module", ["onnxruntime", "faiss", "openvino", "nncf"])
def test_missing_library_names_the_extra(monkeypatch, module):
    from mathir.indexing.ann_index import require_faiss
    from mathir.neural.backends import require_onnx

    monkeypatch.setitem(sys.modules, module, None)
    check = {"onnxruntime": require_onnx, "faiss": require_faiss,
             "openvino": lambda: require_onnx("x", "openvino"),
             "nncf": lambda: require_onnx("x", "openvino-int8")}[module]
    with pytest.raises(InputError, match=r"`neural` extra \(" + module + r" not installed\).*"
                       r"pip install 'mathir\[neural\]'"):
        check()


def test_cli_passes_the_backend_to_the_pipelines():
    from mathir import cli
    from mathir.cli.commands import pipeline_options

    parser = cli.parser()
    args = parser.parse_args(["experiment", "arqmath-task1", "--backend", "onnx-int8",
                              "--dense-search", "hnsw"])
    assert pipeline_options(args) == {"backend": "onnx-int8", "search": "hnsw"}
    from mathir.experiment import accepts
    from mathir.pipelines import neural
    from mathir.tasks.arqmath import fusion

    for factory in (neural.dense, neural.bm25_biencoder, neural.bm25_crossencoder, fusion):
        assert accepts(factory, "backend")
    assert accepts(fusion, "search") and accepts(neural.dense, "search")


def test_batches_are_ordered_by_word_pieces_not_characters():
    from mathir.models import default_model_path
    from mathir.neural.runtime import bi_encoder_model

    model = bi_encoder_model(default_model_path(), "onnx")
    # a short formula is many word pieces; a long plain sentence few
    texts = ["$\\frac{\\partial^2 u}{\\partial x^2}+\\nabla\\cdot\\vec{F}=\\sum_{k=0}^\\infty a_k$",
             "the the the the the the the the the the the the the the the the the the the the",
             "x"]
    pieces = [len(ids) for ids, _ in model.tokenize.unpadded(texts)]
    assert pieces[0] > pieces[1] and len(texts[0]) < len(texts[1])
    batches = list(model.batches(texts, 1))
    assert [int(p[0]) for p, _ in batches] == [0, 1, 2]
    # each batch is what the padding tokeniser makes of the same texts
    for positions, feeds in model.batches(texts * 3, 4):
        want = model.tokenize([(texts * 3)[i] for i in positions])
        assert feeds.keys() == want.keys()
        for k in feeds:
            np.testing.assert_array_equal(feeds[k], want[k])
    # tokenising workers give the same vectors
    workers = bi_encoder_model(default_model_path(), "onnx", workers=2)
    np.testing.assert_allclose(workers.encode(texts * 5, batch_size=2),
                               model.encode(texts * 5, batch_size=2), atol=1e-6)


def test_openvino_requests_in_flight_return_each_text_its_vector(two_layer_minilm):
    pytest.importorskip("openvino")
    from mathir.neural.runtime import bi_encoder_model

    model = bi_encoder_model(two_layer_minilm, "openvino")
    texts = [f"{t} {i}" for i, t in enumerate(TEXTS * 5)]
    alone = np.concatenate([model.encode([t]) for t in texts])
    # batches of one: every request is in flight at some point, read back in order
    np.testing.assert_allclose(model.encode(texts, batch_size=1), alone, atol=1e-5)
    np.testing.assert_allclose(model.encode(texts, batch_size=4), alone, atol=1e-5)


def test_openvino_leaves_subnormal_floats_alone(two_layer_minilm):
    """OpenVINO flushes denormals to zero in the threads it runs in, and that leaked into
    mathir's thread: every later subnormal compared as zero (Hypothesis's float strategies
    refused to run after this file's tests)."""
    pytest.importorskip("openvino")
    from mathir.neural.runtime import bi_encoder_model

    tiny = 2.2250738585072014e-308  # the smallest normal double
    assert tiny / 2 > 0
    model = bi_encoder_model(str(two_layer_minilm), "openvino")
    model.encode(["the integral of $x$", "primes are infinite"])
    assert tiny / 2 > 0, "the calling thread flushes subnormals to zero"


def test_a_model_saved_by_sentence_transformers_6_exports(tmp_path, two_layer_minilm):
    """sentence-transformers 6 saves its pooling as ``"pooling_mode": "mean"``, not as the
    older ``pooling_mode_mean_tokens`` flags: such a model (one ``mathir train-reranker
    --kind bi-encoder`` saves) was refused by every ONNX backend as "pooling mean is not
    supported ... (mean or CLS only)"."""
    import json

    from sentence_transformers import SentenceTransformer

    from mathir.neural.bi_encoder import load_bi_encoder

    saved = tmp_path / "st6"
    SentenceTransformer(str(two_layer_minilm), device="cpu").save(str(saved))
    pooling = next(p for p in saved.rglob("config.json") if "pooling" in str(p).lower())
    assert json.loads(pooling.read_text())["pooling_mode"] == "mean"
    ref = load_bi_encoder(saved).encode(TEXTS)
    assert _cos(load_bi_encoder(saved, backend="onnx").encode(TEXTS), ref).min() > 0.99999
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "pooling_mode": "max"}))
    with pytest.raises(InputError, match="pooling max is not supported by the ONNX backends"):
        load_bi_encoder(saved, backend="onnx-int8")
