"""The transformer test models: one BERT encoder layer at any size.

`encoder_layer` writes the graph a BERT encoder layer exports to with opset 17:
separate Q / K / V MatMul + Add projections, Reshape to heads (a constant int64
shape), K transposed straight to [batch, heads, head, seq], scores scaled by
Div(sqrt(head size)), the additive mask added, Softmax, the context projected
back and added to the input, LayerNormalization, the feed-forward block with
GELU in its erf form (Div, Erf, Add, Mul, Mul), a second residual add and
LayerNormalization. Every scalar constant is a 0-d f32 initializer. Inputs are
`hidden` [1, seq, hidden] and `mask` [1, 1, 1, seq]; the output is `out`.
"""
import collections
import math

import numpy as np
from onnx import TensorProto

from testmodels.builder import GraphBuilder

Size = collections.namedtuple("Size", "seq hidden heads intermediate")
BERT_BASE = Size(seq=128, hidden=768, heads=12, intermediate=3072)
SMALL = Size(seq=7, hidden=16, heads=2, intermediate=24)
MASK_VALUE = -10000.0  # what BERT adds where the attention mask is 0


def dense(b, name, x, fan_in, fan_out):
    """MatMul by a [fan_in, fan_out] weight, then Add of the bias, as torch exports nn.Linear on 3-D input."""
    weight = b.weight(name + ".weight", [fan_in, fan_out], 1.0 / math.sqrt(fan_in))
    y = b.node("MatMul", name + ".MatMul", [x, weight])
    return b.node("Add", name + ".Add", [y, b.weight(name + ".bias", [fan_out], 0.02)])


def layer_norm(b, name, x, width, output=None):
    scale = 1.0 + 0.1 * b.rng.standard_normal([width], dtype=np.float32)
    scale = b.tensor(name + ".weight", scale.astype(np.float32))
    bias = b.weight(name + ".bias", [width], 0.1)
    return b.node("LayerNormalization", name, [x, scale, bias], output=output, axis=-1, epsilon=1e-12)


def encoder_layer(size, graph_name, seed):
    b = GraphBuilder(seed)
    head = size.hidden // size.heads
    heads_shape = b.const("heads_shape", [1, size.seq, size.heads, head], np.int64)
    hidden_shape = b.const("hidden_shape", [1, size.seq, size.hidden], np.int64)

    def split_heads(name, perm):
        y = dense(b, "attention.self." + name, "hidden", size.hidden, size.hidden)
        y = b.node("Reshape", "attention.self.%s.Reshape" % name, [y, heads_shape])
        return b.node("Transpose", "attention.self.%s.Transpose" % name, [y], perm=perm)

    q = split_heads("query", [0, 2, 1, 3])
    k = split_heads("key", [0, 2, 3, 1])
    v = split_heads("value", [0, 2, 1, 3])
    scores = b.node("MatMul", "attention.self.scores.MatMul", [q, k])
    scores = b.node("Div", "attention.self.scores.Div", [scores, b.const("attention_scale", math.sqrt(head))])
    scores = b.node("Add", "attention.self.scores.AddMask", [scores, "mask"])
    probs = b.node("Softmax", "attention.self.Softmax", [scores], axis=-1)
    context = b.node("MatMul", "attention.self.context.MatMul", [probs, v])
    context = b.node("Transpose", "attention.self.context.Transpose", [context], perm=[0, 2, 1, 3])
    context = b.node("Reshape", "attention.self.context.Reshape", [context, hidden_shape])
    attention = dense(b, "attention.output.dense", context, size.hidden, size.hidden)
    attention = b.node("Add", "attention.output.residual", [attention, "hidden"])
    attention = layer_norm(b, "attention.output.LayerNorm", attention, size.hidden)

    x = dense(b, "intermediate.dense", attention, size.hidden, size.intermediate)
    g = b.node("Div", "intermediate.gelu.Div", [x, b.const("gelu_sqrt2", math.sqrt(2.0))])
    g = b.node("Erf", "intermediate.gelu.Erf", [g])
    g = b.node("Add", "intermediate.gelu.Add", [g, b.const("gelu_one", 1.0)])
    g = b.node("Mul", "intermediate.gelu.Mul", [x, g])
    g = b.node("Mul", "intermediate.gelu.Half", [g, b.const("gelu_half", 0.5)])

    y = dense(b, "output.dense", g, size.intermediate, size.hidden)
    y = b.node("Add", "output.residual", [y, attention])
    layer_norm(b, "output.LayerNorm", y, size.hidden, output="out")
    inputs = [("hidden", TensorProto.FLOAT, [1, size.seq, size.hidden]),
              ("mask", TensorProto.FLOAT, [1, 1, 1, size.seq])]
    return b.model(graph_name, inputs, [("out", TensorProto.FLOAT, [1, size.seq, size.hidden])])


def bert_layer(seed=768):
    return encoder_layer(BERT_BASE, "bert_layer", seed)


def small_transformer(seed=7):
    return encoder_layer(SMALL, "small_transformer", seed)


def encoder_inputs(size, seed):
    """Random hidden states and a mask that hides the last two positions."""
    rng = np.random.default_rng(seed)
    mask = np.zeros([1, 1, 1, size.seq], dtype=np.float32)
    mask[..., -2:] = MASK_VALUE
    return {"hidden": rng.standard_normal([1, size.seq, size.hidden], dtype=np.float32), "mask": mask}


def small_transformer_inputs(seed=1007):
    return encoder_inputs(SMALL, seed)
