"""The packaged model's self-attention and GELU as onnxruntime's fused CPU kernels (same vectors, less CPU).

The packaged all-MiniLM-L6-v2 was exported with attention spelled out operator by operator (three
projections, reshapes and transposes, a scaled product, a mask built with ``Where``, ``Softmax``,
an ``IsNaN`` guard) and GELU as ``Div``/``Erf``/``Add``/``Mul``/``Mul``. onnxruntime's own graph
optimizer recognises neither spelling, so each runs as a dozen small kernels. :func:`rewrite`
replaces each layer's attention by one ``com.microsoft`` ``Attention`` node (the Q, K and V weights
concatenated, the padding mask as the raw 0/1 mask) and each GELU by ``BiasGelu``: the same
arithmetic in float32, ~1.15-1.2x fewer CPU-seconds per text on this project's benchmark machine
(docs/retrieval.md, "The embedding model").

Nothing is trusted on pattern alone: :func:`rewrite` returns the model unchanged when any layer
does not match exactly, and :func:`agrees` runs the rewritten model beside the original on padded
probe texts before it is used (vectors must agree to float rounding), so the index's vectors and
model id do not change. The rewritten file is cached beside the int8 rewrite (``int8.cache_dir``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover - imports only for annotations
    import onnx

__all__ = ["REWRITE_VERSION", "agrees", "rewrite"]

REWRITE_VERSION = 1  # part of the cached file's name: a change to rewrite() must not load an old file
_MASK = "remnic_fused_mask"
_AGREE_ATOL = 2e-5  # largest difference allowed between the two models' outputs (float rounding: ~1e-6)


class _NoMatch(Exception):
    """A layer that is not exactly the pattern this rewrite knows."""


class _Graph:
    def __init__(self, graph: onnx.GraphProto) -> None:
        from onnx import numpy_helper

        self.graph = graph
        self.inits = {i.name: i for i in graph.initializer}
        self.made_by = {out: node for node in graph.node for out in node.output}
        self.users: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.users.setdefault(name, []).append(node)
        self._array = numpy_helper.to_array

    def node(self, name: str, op: str) -> onnx.NodeProto:
        found = self.made_by.get(name)
        if found is None or found.op_type != op:
            raise _NoMatch(f"{name}: expected {op}")
        return found

    def const(self, name: str) -> np.ndarray:
        if name not in self.inits:
            raise _NoMatch(f"{name}: expected a constant")
        return np.asarray(self._array(self.inits[name]))

    def weight(self, name: str) -> np.ndarray:
        """A MatMul's 2-D float weight: an initializer, or an int8 one dequantized by ``Mul(Cast(w), scale)``."""
        if name in self.inits:
            w = self.const(name)
        else:
            mul = self.node(name, "Mul")
            cast = self.node(mul.input[0], "Cast")
            w = self.const(cast.input[0]).astype(np.float32) * self.const(mul.input[1]).astype(np.float32)
        if w.ndim != 2 or w.dtype != np.float32:
            raise _NoMatch(f"{name}: expected a 2-D float weight")
        return w

    def projection(self, name: str) -> tuple[str, np.ndarray, np.ndarray]:
        """Walk up from a head-split tensor to ``Add(MatMul(x, W), b)``: (x, W, b)."""
        seen = 0
        node = self.made_by.get(name)
        while node is not None and node.op_type in ("Reshape", "Transpose", "Mul") and seen < 8:
            if node.op_type == "Mul" and node.input[1] not in self.inits:  # a scale must be constant
                raise _NoMatch(f"{node.name}: expected a constant scale")
            node = self.made_by.get(node.input[0])
            seen += 1
        if node is None or node.op_type != "Add":
            raise _NoMatch(f"{name}: expected a projection's bias Add")
        matmul = self.node(node.input[0], "MatMul")
        bias = self.const(node.input[1]).astype(np.float32)
        return matmul.input[0], self.weight(matmul.input[1]), bias

    def scales(self, name: str) -> float:
        """The product of the constant scales met walking up from ``name`` to its projection."""
        total = 1.0
        node = self.made_by.get(name)
        while node is not None and node.op_type in ("Reshape", "Transpose", "Mul"):
            if node.op_type == "Mul":
                total *= float(self.const(node.input[1]).reshape(-1)[0])
            node = self.made_by.get(node.input[0])
        return total


def rewrite(model: bytes) -> tuple[bytes, int]:
    """``model`` with each self-attention as one ``Attention`` node and each GELU as ``BiasGelu``; and how
    many attentions were fused (0: returned unchanged — some layer did not match)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    parsed = onnx.load_from_string(model)
    g = _Graph(parsed.graph)
    if not any(i.name == "attention_mask" for i in parsed.graph.input):
        return model, 0
    replace: dict[int, onnx.NodeProto] = {}
    added: list[onnx.TensorProto] = []
    try:
        for node in parsed.graph.node:
            if node.op_type != "MatMul" or len(g.users.get(node.output[0], ())) != 1:
                continue
            head_t = g.users[node.output[0]][0]
            if head_t.op_type != "Transpose" or len(g.users.get(head_t.output[0], ())) != 1:
                continue
            merge = g.users[head_t.output[0]][0]
            guard = g.made_by.get(node.input[0])
            if merge.op_type != "Reshape" or guard is None or guard.op_type != "Where":
                continue
            softmax = g.node(guard.input[2], "Softmax")
            scores = g.node(g.node(softmax.input[0], "Add").input[0], "MatMul")
            xq, wq, bq = g.projection(scores.input[0])
            xk, wk, bk = g.projection(scores.input[1])
            xv, wv, bv = g.projection(node.input[1])
            if not xq == xk == xv:
                raise _NoMatch("Q, K and V read different inputs")
            hidden = wq.shape[1]
            heads = _heads(g, scores.input[0], hidden)
            scale = g.scales(scores.input[0]) * g.scales(scores.input[1])
            if not np.isclose(scale, 1.0 / np.sqrt(hidden // heads), rtol=1e-4):
                raise _NoMatch(f"attention scale {scale} is not 1/sqrt(head size)")
            p = f"remnic_attn{len(replace)}_"
            added += [
                numpy_helper.from_array(np.concatenate([wq, wk, wv], axis=1), p + "w"),
                numpy_helper.from_array(np.concatenate([bq, bk, bv]), p + "b"),
            ]
            replace[id(merge)] = helper.make_node(
                "Attention",
                [xq, p + "w", p + "b", _MASK],
                list(merge.output),
                name=p + "node",
                domain="com.microsoft",
                num_heads=heads,
            )
    except _NoMatch:
        return model, 0
    if not replace:
        return model, 0
    replace.update(_gelus(g, parsed.graph, added))
    nodes = [helper.make_node("Cast", ["attention_mask"], [_MASK], to=TensorProto.INT32, name="remnic_mask_cast")]
    nodes += [replace.get(id(n), n) for n in parsed.graph.node]
    parsed.graph.initializer.extend(added)
    _prune(parsed.graph, nodes)
    if not any(o.domain == "com.microsoft" for o in parsed.opset_import):
        parsed.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return parsed.SerializeToString(), sum(1 for n in replace.values() if n.op_type == "Attention")


def _heads(g: _Graph, name: str, hidden: int) -> int:
    """The number of heads: the head size is the one positive constant in the Q split's Reshape shape."""
    node = g.made_by.get(name)
    while node is not None and node.op_type != "Reshape":
        node = g.made_by.get(node.input[0])
    if node is None:
        raise _NoMatch(f"{name}: no head split")
    shape = g.made_by.get(node.input[1])
    parts = [node.input[1]] if shape is None or shape.op_type != "Concat" else list(shape.input)
    sizes = [int(v) for part in parts if part in g.inits for v in g.const(part).reshape(-1) if v > 0]
    if len(sizes) != 1 or hidden % sizes[0]:
        raise _NoMatch(f"{name}: head size not found")
    return hidden // sizes[0]


def _gelus(g: _Graph, graph: onnx.GraphProto, added: list[onnx.TensorProto]) -> dict[int, onnx.NodeProto]:
    """``x * 0.5 * (1 + erf(x / sqrt 2))`` over ``x = MatMul + bias`` as ``BiasGelu(MatMul, bias)``."""
    from onnx import helper

    out: dict[int, onnx.NodeProto] = {}
    for node in graph.node:
        if node.op_type != "Erf":
            continue
        try:
            div = g.node(node.input[0], "Div")
            if not np.isclose(float(g.const(div.input[1]).reshape(-1)[0]), np.sqrt(2.0), rtol=1e-6):
                continue
            (one,) = g.users[node.output[0]]
            (half,) = g.users[one.output[0]]
            (last,) = g.users[half.output[0]]
            consts = [float(g.const(i).reshape(-1)[0]) for i in (*one.input, *half.input) if i in g.inits]
            if (one.op_type, half.op_type, last.op_type) != ("Add", "Mul", "Mul") or sorted(consts) != [0.5, 1.0]:
                continue
            if div.input[0] not in last.input:
                continue
            bias_add = g.node(div.input[0], "Add")
            g.node(bias_add.input[0], "MatMul")
            g.const(bias_add.input[1])
        except (_NoMatch, ValueError, KeyError):
            continue
        out[id(last)] = helper.make_node(
            "BiasGelu", list(bias_add.input), list(last.output), name=f"remnic_gelu{len(out)}", domain="com.microsoft"
        )
    return out


def _prune(graph: onnx.GraphProto, nodes: list[Any]) -> None:
    """Keep the nodes and initializers the outputs still need, in order."""
    need = {o.name for o in graph.output}
    keep: list[Any] = []
    for node in reversed(nodes):
        if any(o in need for o in node.output):
            keep.append(node)
            need.update(i for i in node.input if i)
    keep.reverse()
    del graph.node[:]
    graph.node.extend(keep)
    used = [i for i in graph.initializer if i.name in need]
    del graph.initializer[:]
    graph.initializer.extend(used)


def agrees(original: Any, fused: Any, feeds: list[dict[str, np.ndarray]]) -> bool:
    """Whether two sessions give the same token vectors (within float rounding) where the mask is 1."""
    for feed in feeds:
        wanted = {i.name for i in original.get_inputs()}
        a = original.run(None, {k: v for k, v in feed.items() if k in wanted})[0]
        b = fused.run(None, {k: v for k, v in feed.items() if k in wanted})[0]
        mask = feed["attention_mask"].astype(bool)
        if a.shape != b.shape or not np.allclose(a[mask], b[mask], atol=_AGREE_ATOL, rtol=0):
            return False
    return True
