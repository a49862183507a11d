"""Bring-your-own models, for real: tiny ONNX graphs and tokenizers built here, loaded by remnic.

The ``onnx`` package writes real graphs (gather an embedding table, pool, dot products), so
loading, tokenising, pooling, the model id and the rerank stage all run through onnxruntime
exactly as they would for an exported bge-small or ms-marco-MiniLM model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from remnic.config import settings_for
from remnic.index.rerank import RerankError, RerankerSpec, get_reranker
from remnic.service.memory import Memory

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    *[
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "we",
        "our",
        "my",
        "i",
        "you",
        "he",
        "she",
        "it",
        "they",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "and",
        "or",
        "but",
        "do",
        "does",
        "did",
        "what",
        "who",
        "when",
        "where",
        "how",
        "which",
        "why",
        "release",
        "releases",
        "ship",
        "shipped",
        "tuesday",
        "monday",
        "friday",
        "deploy",
        "cache",
        "ttl",
        "ana",
        "ben",
        "tabs",
        "spaces",
        "python",
        "editor",
        "pets",
        "home",
        "zebra",
        "garden",
        "cat",
        "dog",
        "keeps",
        "has",
        "likes",
        "prefers",
        "bicycle",
        "red",
        "blue",
        "door",
        "lighthouse",
        "keeper",
        "paints",
        "repaints",
        "every",
        "april",
        "budget",
        "meeting",
        "notes",
        "coffee",
        "river",
    ],
]


def write_tokenizer(path: Path) -> Path:
    """A BERT-shaped tokenizer.json: lowercase, whitespace/punctuation split, word-level vocab, [CLS] a [SEP] b [SEP]."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tok.save(str(path))
    return path


def _table(dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((len(VOCAB), dim)).astype(np.float32)
    table[:4] = 0.0  # special tokens carry no meaning
    return table


def write_embedder(path: Path, *, dim: int = 16, pooled_output: bool = False, seed: int = 0) -> Path:
    """input_ids/attention_mask → last_hidden_state = table[input_ids] (or sentence_embedding = its masked mean)."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    table = numpy_helper.from_array(_table(dim, seed), "table")
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["tokens"], axis=0)]
    if pooled_output:
        axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes2")
        axis1 = numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")
        nodes += [
            helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["maskf", "axes2"], ["mask3"]),
            helper.make_node("Mul", ["tokens", "mask3"], ["masked"]),
            helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
            helper.make_node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=0),
            helper.make_node("Div", ["summed", "count"], ["sentence_embedding"]),
        ]
        out = helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", dim])
        inits = [table, axes, axis1]
    else:
        nodes.append(helper.make_node("Identity", ["tokens"], ["last_hidden_state"]))
        out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", dim])
        inits = [table]
    graph = helper.make_graph(nodes, "tiny-embedder", [ids, mask], [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def write_cross_encoder(directory: Path, *, boost: dict[str, float] | None = None, two_class: bool = False) -> Path:
    """A lexical cross-encoder: logit = Σ over query tokens × passage tokens of weight·[same word] − 1.

    Token vectors are one-hot rows scaled by a per-word weight (``boost``), so the logit
    counts shared words, weighted; type ids tell the query (0) from the memory (1).
    """
    directory.mkdir(parents=True, exist_ok=True)
    weights = np.ones(len(VOCAB), dtype=np.float32)
    weights[:4] = 0.0
    for word, w in (boost or {}).items():
        weights[VOCAB.index(word)] = w
    table = numpy_helper.from_array(np.diag(weights).astype(np.float32), "table")
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    axes2 = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes2")
    axis1 = numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")
    axis_last = numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis_last")
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["tok"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["t"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["m", "t"], ["mp"]),
        helper.make_node("Sub", ["m", "mp"], ["mq"]),
        helper.make_node("Unsqueeze", ["mq", "axes2"], ["mq3"]),
        helper.make_node("Unsqueeze", ["mp", "axes2"], ["mp3"]),
        helper.make_node("Mul", ["tok", "mq3"], ["tq"]),
        helper.make_node("Mul", ["tok", "mp3"], ["tp"]),
        helper.make_node("ReduceSum", ["tq", "axis1"], ["q"], keepdims=0),
        helper.make_node("ReduceSum", ["tp", "axis1"], ["p"], keepdims=0),
        helper.make_node("Mul", ["q", "p"], ["qp"]),
        helper.make_node("ReduceSum", ["qp", "axis_last"], ["shared"], keepdims=1),
        helper.make_node("Sub", ["shared", "one"], ["logit"]),
    ]
    if two_class:
        nodes += [
            helper.make_node("Neg", ["logit"], ["neg"]),
            helper.make_node("Concat", ["neg", "logit"], ["logits"], axis=1),
        ]
        out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 2])
    else:
        nodes.append(helper.make_node("Identity", ["logit"], ["logits"]))
        out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, [out], [table, one, axes2, axis1, axis_last])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(directory / "model.onnx"))
    write_tokenizer(directory / "tokenizer.json")
    return directory


def test_cross_encoder_scores_pairs_through_its_tokenizer(tmp_path: Path) -> None:
    model = get_reranker(RerankerSpec(write_cross_encoder(tmp_path / "ce")))
    res = model.score("who keeps a zebra", ["Ben keeps a zebra in the garden", "Ana likes python", "zebra zebra"])
    shared = [2.0, 0.0, 2.0]  # "keeps"+"zebra", nothing, "zebra"×1 query token × 2 passage tokens = 2
    expected = [1 / (1 + np.exp(-(s - 1))) for s in shared]  # "a" is in the vocab too: the first pair shares 3
    expected[0] = 1 / (1 + np.exp(-(3 - 1)))
    assert res.scores == pytest.approx(expected, abs=1e-6)
    assert res.ms >= 0
    two = get_reranker(RerankerSpec(write_cross_encoder(tmp_path / "ce2", two_class=True)))
    # A two-class head: sigmoid(relevant − irrelevant) = sigmoid(2 × logit).
    assert two.score("zebra", ["zebra"]).scores[0] == pytest.approx(1 / (1 + np.exp(-0.0)), abs=1e-6)
    assert model.model_id.startswith("rerank-") and model.model_id != two.model_id


def test_rerank_budget_stops_after_the_first_batch(tmp_path: Path) -> None:
    model = get_reranker(RerankerSpec(write_cross_encoder(tmp_path / "ce"), batch_size=2))
    res = model.score("zebra", ["zebra"] * 7, budget_ms=0)
    assert res.scores[:2] != [None, None] and res.scores[2:] == [None] * 5


def test_missing_rerank_model_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(RerankError, match=r"model\.onnx"):
        get_reranker(RerankerSpec(tmp_path / "nothing-here")).score("q", ["t"])


@pytest.fixture()
def pets(tmp_path: Path) -> Memory:
    root = tmp_path / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records(
        [
            {"content": "Ana has two pets at home: a cat and a dog.", "category": "fact", "id": "mem_ana"},
            {"content": "Ben keeps a zebra in the garden.", "category": "fact", "id": "mem_ben"},
            {"content": "We ship releases every Tuesday.", "category": "decision", "id": "mem_ship"},
        ]
    )
    yield memory
    memory.close()


def test_rerank_is_off_by_default_and_its_score_joins_the_decomposition(pets: Memory, tmp_path: Path) -> None:
    plain = pets.recall("which pets does anyone keep at home, a zebra?", top_k=3)
    assert plain.rerank is None and all(h.terms.rerank == 0 for h in plain.hits)
    ce = write_cross_encoder(tmp_path / "ce", boost={"zebra": 5.0})
    settings = settings_for(pets.root, recall={"rerank": str(ce), "rerank_weight": 3.0})
    with Memory.open(settings=settings) as mem:
        result = mem.recall("which pets does anyone keep at home, a zebra?", top_k=3, xray=True)
        assert result.rerank is not None and result.rerank.admitted == result.rerank.considered >= 2
        assert "scored in" in result.rerank.reason and "rerank-" in result.rerank.reason
        assert result.hits[0].id == "mem_ben"  # the cross-encoder weighs "zebra" far above the rest
        for hit in result.hits:
            assert 0 < hit.terms.rerank <= 3.0
            assert hit.score == pytest.approx(hit.terms.final)
        top = result.xray.results[0].score
        assert top.rerank == pytest.approx(result.hits[0].terms.rerank, abs=1e-6)
        assert "rerank" in result.to_dict()
        assert "reranked by rerank-" in result.xray.tier_explain.tier_reason


def test_a_broken_rerank_path_leaves_the_recall_as_it_was(pets: Memory, tmp_path: Path) -> None:
    settings = settings_for(pets.root, recall={"rerank": str(tmp_path / "missing")})
    with Memory.open(settings=settings) as mem:
        result = mem.recall("zebra garden", top_k=2)
        assert result.hits and result.hits[0].id == "mem_ben"
        assert result.rerank is not None and result.rerank.admitted == 0 and "skipped" in result.rerank.reason
