"""A test model for the masks and index arithmetic of exported attention graphs.

small_masked_attention (inputs `input` [1, 6, 8], `lengths` [1, 1] and `dropped` [1, 6], all f32;
outputs `probs` [1, 6, 6] and `context` [1, 6, 8]) is one self-attention head whose keys are
masked the way torch exports a length and padding mask:

* positions = Cast(Range(0, Shape(input)[1], 1)) folds at import to the constant 0..5;
* in_length = Less(positions, lengths), kept = Not(Equal(dropped, 1)), valid = And(in_length, kept),
  and Or(valid, GreaterOrEqual(lengths, 6)) are run-time booleans (f32 0/1 between tasks);
* Where(valid, scores, -1e4) before the Softmax fuses into the scores' MatMul task;
* the input's view shape is Where(Greater(Shape(input), 6), -1, Shape(input)) = [1, 6, -1], folded
  at import (Where and Greater of constants with broadcasting).
"""
import numpy as np
from onnx import TensorProto

from testmodels.builder import GraphBuilder

SEQ, HIDDEN = 6, 8


def small_masked_attention(seed=37):
    b = GraphBuilder(seed)
    i64 = np.int64
    shape = b.node("Shape", "input_shape", ["input"])
    view_shape = b.node("Where", "view.where", [b.node("Greater", "view.greater", [shape, b.const("six", SEQ, i64)]),
                                                b.const("minus_one", -1, i64), shape])
    x = b.node("Reshape", "view", ["input", view_shape])
    seq = b.node("Gather", "seq.gather", [shape, b.const("one", 1, i64)], axis=0)
    positions = b.node("Range", "positions", [b.const("zero", 0, i64), seq, b.const("one", 1, i64)])
    positions = b.node("Cast", "positions.cast", [positions], to=TensorProto.FLOAT)
    in_length = b.node("Less", "mask.in_length", [positions, "lengths"])  # [1, SEQ]
    kept = b.node("Not", "mask.kept", [b.node("Equal", "mask.dropped", ["dropped", b.const("one_f", 1.0)])])
    valid = b.node("And", "mask.valid", [in_length, kept])
    full = b.node("GreaterOrEqual", "mask.full", ["lengths", b.const("seq_f", float(SEQ))])
    valid = b.node("Or", "mask.any", [valid, full])
    q = b.node("MatMul", "attn.q", [x, b.weight("attn.q.weight", [HIDDEN, HIDDEN], 0.35)])
    k = b.node("MatMul", "attn.k", [x, b.weight("attn.k.weight", [HIDDEN, HIDDEN], 0.35)])
    v = b.node("MatMul", "attn.v", [x, b.weight("attn.v.weight", [HIDDEN, HIDDEN], 0.35)])
    kt = b.node("Transpose", "attn.kt", [k], perm=[0, 2, 1])
    scores = b.node("Mul", "attn.scale", [b.node("MatMul", "attn.scores", [q, kt]),
                                          b.const("scale", 1.0 / np.sqrt(HIDDEN))])
    masked = b.node("Where", "attn.mask", [valid, scores, b.const("masked_score", -1e4)])
    probs = b.node("Softmax", "attn.softmax", [masked], output="probs", axis=-1)
    b.node("MatMul", "attn.context", [probs, v], output="context")
    return b.model("small_masked_attention",
                   [("input", TensorProto.FLOAT, [1, SEQ, HIDDEN]), ("lengths", TensorProto.FLOAT, [1, 1]),
                    ("dropped", TensorProto.FLOAT, [1, SEQ])],
                   [("probs", TensorProto.FLOAT, [1, SEQ, SEQ]), ("context", TensorProto.FLOAT, [1, SEQ, HIDDEN])])


def small_masked_attention_inputs(seed=1037):
    rng = np.random.default_rng(seed)
    # Keys 0, 1 and 3 are kept: 2 is dropped, 4 and 5 are past the length.
    return {"input": rng.standard_normal([1, SEQ, HIDDEN], dtype=np.float32),
            "lengths": np.array([[4.0]], dtype=np.float32),
            "dropped": np.array([[0, 0, 1, 0, 0, 0]], dtype=np.float32)}
