"""The packaged model's attention and GELU as onnxruntime's fused kernels (remnic.index.fused): same vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import test_int8
from onnx import numpy_helper

from remnic.index import fused, int8
from remnic.index.embed import Embedder, EmbedderSpec
from remnic.index.embed_spec import _default_model_path, _file_sha256

TEXTS = [
    "ok",
    "Remnic keeps agent memory as plain markdown files in git.",
    "The staging database listens on port 5433 since the migration.",
    "Caroline joined a mentorship program for LGBTQ youth on the weekend before 17 July 2023, "
    "and she says it changed how she thinks about her own coming out.",
]


cache = test_int8.cache  # a cache folder of the test's own, nothing remembered from an earlier test


def _plain(monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """An embedder running the model file as it is (the rewrite turned off for this one)."""
    real = int8.open_session

    def unfused(*args: object, **kwargs: object) -> object:
        return real(*args, **{**kwargs, "fuse": False})  # type: ignore[arg-type]

    monkeypatch.setattr("remnic.index.embed.open_session", unfused)
    return Embedder(EmbedderSpec())


def test_the_packaged_model_runs_fused_with_the_same_vectors(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = Embedder(EmbedderSpec())
    got = embedder.embed(TEXTS)  # one padded batch: the mask must be honoured
    digest = _file_sha256(_default_model_path(), "model")
    (kept,) = cache.glob(f"{digest[:24]}-*-fav{fused.REWRITE_VERSION}.onnx")
    ops = [n.op_type for n in onnx.load(str(kept)).graph.node]
    assert ops.count("Attention") == 6 and ops.count("BiasGelu") == 6 and "Softmax" not in ops and "Erf" not in ops
    assert int8.kept_at(_default_model_path(), "model", fused=True) == str(kept)
    want = _plain(monkeypatch).embed(TEXTS)
    assert np.abs(got - want).max() < 1e-5
    one_by_one = np.vstack([embedder.embed([t]) for t in TEXTS])  # the fused session, one text a call
    assert np.abs(one_by_one - want).max() < 1e-5


def test_the_next_process_loads_the_cached_rewrite(cache: Path) -> None:
    Embedder(EmbedderSpec()).embed(TEXTS[:1])
    (kept,) = cache.glob("*-fav*.onnx")
    before = kept.stat().st_mtime_ns
    code = (
        "import sys; from remnic.index.embed import Embedder, EmbedderSpec; from remnic.index import int8;"
        "from remnic.index.embed_spec import _default_model_path;"
        "Embedder(EmbedderSpec()).embed(['x']);"
        "print(int8.kept_at(_default_model_path(), 'model', fused=True)); print('onnx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(kept), "False"]  # not rewritten again: onnx is not even imported
    assert kept.stat().st_mtime_ns == before


def test_a_rewrite_with_other_outputs_is_not_used(cache: Path) -> None:
    data = _default_model_path().read_bytes()
    out, count = fused.rewrite(data)
    assert count == 6 and int8._fused_agrees(data, out)
    model = onnx.load_from_string(out)
    weight = next(i for i in model.graph.initializer if i.name == "remnic_attn0_w")
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * 1.01, weight.name))
    assert not int8._fused_agrees(data, model.SerializeToString())


def test_a_model_of_another_shape_is_left_as_it_is(tmp_path: Path) -> None:
    from test_rerank import write_embedder

    data = write_embedder(tmp_path / "tiny.onnx").read_bytes()
    assert fused.rewrite(data) == (data, 0)


def test_a_model_that_does_not_fuse_is_not_tried_again(cache: Path, tmp_path: Path) -> None:
    from test_rerank import write_embedder

    model = write_embedder(tmp_path / "tiny.onnx")
    assert int8.fused_model(model, "tiny") is None
    (marker,) = cache.glob("*-fav*.onnx.skip")
    int8._memo.clear()
    assert int8.fused_model(model, "tiny") is None and marker.exists()


def test_a_broken_onnx_install_runs_the_model_as_it_is(cache: Path, tmp_path: Path) -> None:
    """An onnx whose import raises something other than ImportError (a protobuf mismatch) must not stop
    embedding: the rewrite is skipped, not remembered as impossible, and the vectors are the same."""
    shadow = tmp_path / "shadow"
    (shadow / "onnx").mkdir(parents=True)
    (shadow / "onnx" / "__init__.py").write_text("raise TypeError('Descriptors cannot be created directly')\n")
    code = (
        "import json; from remnic.index.embed import Embedder, EmbedderSpec;"
        f"print(json.dumps(Embedder(EmbedderSpec()).embed({TEXTS[1:3]!r}).tolist()))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), *sys.path])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "could not be made" in done.stderr
    want = Embedder(EmbedderSpec()).embed(TEXTS[1:3])
    assert np.abs(np.array(json.loads(done.stdout)) - want).max() < 1e-5
    assert not list(cache.glob("*.skip"))
