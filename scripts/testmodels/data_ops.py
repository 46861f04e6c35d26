"""Test models for the operators that move data and the shape arithmetic of exported graphs.

small_detector (input `input` [1, 3, 13, 15], outputs `boxes` and `features`) writes what
detectors and U-Nets export: an explicit zero Pad before a Conv (folded into its padding),
two branches joined by Concat with a residual Add after it, Split into two parts of different
sizes, Slice with negative axes, a negative step and a stride, a reflect Pad, a constant Pad
of the channels with 0.5, nearest Resize by 2 (asymmetric, floor: torch's nn.Upsample), and
the shape arithmetic torch.onnx writes around them (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape, ConstantOfShape, Expand to the Shape of a tensor), which folds at import.

small_embedder (input `input_ids` int64 [1, 7], outputs `logits` and `picked`) is a BERT-style
embedding: Gather of token ids from a constant table, plus position embeddings gathered at
constant positions (folded at import), LayerNormalization, the first token taken by a scalar
Gather, and tokens picked by constant 2-D indices with a negative one.

small_legacy (opset 9: input `input` [1, 2, 9, 11], outputs `scores`, `strided` and `padded`) has the same
operators in their older forms, where what later became inputs were attributes: Pad's pads and
value, Slice's starts / ends / axes (no steps before opset 10), Split's split, Unsqueeze's axes,
and Upsample (Resize before opset 10) with its scales as an input; and a zero Pad before a Conv
that does not fold, because the padded tensor is also a graph output.
"""
import numpy as np
from onnx import TensorProto, helper

from testmodels.builder import GraphBuilder, make_model
from testmodels.vision import conv

DETECTOR_SHAPE = (13, 15)
VOCAB, POSITIONS, HIDDEN, SEQ = 50, 10, 16, 7


def shape_of(b, name, x):
    return b.node("Shape", name, [x])


def small_detector(seed=23):
    b = GraphBuilder(seed)
    i64 = np.int64
    # Pad -> Conv(pads=0): torch's explicit nn.ZeroPad2d before a convolution.
    padded = b.node("Pad", "stem.pad", ["input", b.const("stem_pads", [0, 0, 1, 1, 0, 0, 1, 1], i64)], mode="constant")
    a = b.node("Relu", "stem.relu", [conv(b, "stem.conv", padded, 3, 8, 3)])
    b1 = b.node("Relu", "branch1.relu", [conv(b, "branch1.conv", a, 8, 4, 1)])
    b2 = b.node("Relu", "branch2.relu", [conv(b, "branch2.conv", a, 8, 4, 3, pad=1)])
    joined = b.node("Concat", "neck.concat", [b1, b2], axis=1)
    joined = b.node("Add", "neck.add", [joined, a])
    b.nodes.append(helper.make_node("Split", [joined, b.const("neck_split", [3, 5], i64)],
                                    ["neck.split_0", "neck.split_1"], name="neck.split", axis=1))
    s0 = b.node("Relu", "head0.relu", ["neck.split_0"])
    # Width reversed with step -2 (14, 12, ..., 0), height 1..11 step 2: [1, 5, 6, 8].
    sliced = b.node("Slice", "head1.slice", ["neck.split_1", b.const("slice_starts", [-1, 1], i64),
                                             b.const("slice_ends", [-16, 12], i64), b.const("slice_axes", [-1, 2], i64),
                                             b.const("slice_steps", [-2, 2], i64)])
    reflected = b.node("Pad", "head1.reflect", [sliced, b.const("reflect_pads", [0, 0, 1, 2, 0, 0, 2, 1], i64)],
                       mode="reflect")
    y = b.node("Relu", "head1.relu", [conv(b, "head1.conv", reflected, 5, 4, 3)])  # [1, 4, 7, 9]
    up = b.node("Resize", "head1.upsample", [y, "", b.const("upsample_scales", [1.0, 1.0, 2.0, 2.0])],
                mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    # Channel attention: ReduceMean, plus ConstantOfShape(Shape(..)) of ones, expanded to Shape(up).
    gap = b.node("ReduceMean", "head1.gap", [up], axes=[2, 3], keepdims=1)
    ones = b.node("ConstantOfShape", "head1.ones", [shape_of(b, "head1.gap_shape", gap)],
                  value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))
    gate = b.node("Sigmoid", "head1.gate", [b.node("Add", "head1.gap_plus_one", [gap, ones])])
    up_shape = shape_of(b, "head1.up_shape", up)
    expanded = b.node("Expand", "head1.expand", [gate, up_shape])
    gated = b.node("Mul", "head1.mul", [expanded, up])
    # torch's x.view(x.size(0), x.size(1), -1): Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    dims = []
    for k in range(2):
        d = b.node("Gather", "head1.view.gather%d" % k, [up_shape, b.const("dim%d" % k, k, i64)], axis=0)
        dims.append(b.node("Unsqueeze", "head1.view.unsqueeze%d" % k, [d, b.const("unsqueeze_axes", [0], i64)]))
    view_shape = b.node("Concat", "head1.view.concat", dims + [b.const("minus_one", [-1], i64)], axis=0)
    flat = b.node("Reshape", "head1.view", [gated, view_shape])
    b.node("Softmax", "head1.softmax", [flat], output="boxes", axis=-1)
    channel_pads = b.const("channel_pads", [0, 1, 0, 0, 0, 1, 0, 0], i64)
    b.node("Pad", "head0.pad", [s0, channel_pads, b.const("pad_value", 0.5)], output="features", mode="constant")
    h, w = DETECTOR_SHAPE
    return b.model("small_detector", [("input", TensorProto.FLOAT, [1, 3, h, w])],
                   [("boxes", TensorProto.FLOAT, [1, 4, 14 * 18]),
                    ("features", TensorProto.FLOAT, [1, 5, h, w])])


def small_detector_inputs(seed=1023):
    rng = np.random.default_rng(seed)
    return {"input": rng.standard_normal([1, 3, *DETECTOR_SHAPE], dtype=np.float32)}


def small_embedder(seed=29):
    b = GraphBuilder(seed)
    i64 = np.int64
    words = b.node("Gather", "embeddings.word", [b.weight("word_table", [VOCAB, HIDDEN], 0.5), "input_ids"], axis=0)
    positions = b.node("Gather", "embeddings.position",
                       [b.weight("position_table", [POSITIONS, HIDDEN], 0.5), b.const("position_ids", [list(range(SEQ))],
                                                                                       i64)], axis=0)
    x = b.node("Add", "embeddings.add", [words, positions])
    scale = b.tensor("embeddings.norm.weight", (1.0 + 0.1 * b.rng.standard_normal([HIDDEN])).astype(np.float32))
    x = b.node("LayerNormalization", "embeddings.norm", [x, scale, b.weight("embeddings.norm.bias", [HIDDEN], 0.1)],
               axis=-1, epsilon=1e-12)
    first = b.node("Gather", "pooler.first", [x, b.const("first_token", 0, i64)], axis=1)  # [1, HIDDEN]
    weight = b.weight("pooler.dense.weight", [HIDDEN, 4], 0.25)
    y = b.node("MatMul", "pooler.dense", [first, weight])
    b.node("Tanh", "pooler.tanh", [b.node("Add", "pooler.bias", [y, b.weight("pooler.dense.bias", [4], 0.1)])],
           output="logits")
    b.node("Gather", "picker", [x, b.const("picked_tokens", [[-1, 0], [3, 5]], i64)], output="picked", axis=1)
    return b.model("small_embedder", [("input_ids", TensorProto.INT64, [1, SEQ])],
                   [("logits", TensorProto.FLOAT, [1, 4]), ("picked", TensorProto.FLOAT, [1, 2, 2, HIDDEN])])


def small_embedder_inputs(seed=1029):
    rng = np.random.default_rng(seed)
    return {"input_ids": rng.integers(0, VOCAB, size=[1, SEQ], dtype=np.int64)}


LEGACY_SHAPE = (9, 11)


def small_legacy(seed=31):
    b = GraphBuilder(seed)
    i64 = np.int64
    # An asymmetric zero pad (2 rows above, 1 column each side) folded into the Conv.
    padded = b.node("Pad", "stem.pad", ["input"], mode="constant", pads=[0, 0, 2, 1, 0, 0, 0, 1], value=0.0)
    x = b.node("Relu", "stem.relu", [conv(b, "stem.conv", padded, 2, 4, 3)])  # [1, 4, 9, 11]
    # The same zero pad, but also a graph output: it is written, and the Conv reads it.
    kept = b.node("Pad", "side.pad", ["input"], output="padded", mode="constant", pads=[0, 0, 1, 1, 0, 0, 1, 1])
    x = b.node("Add", "side.add", [conv(b, "side.conv", kept, 2, 4, 3), x])
    x = b.node("Pad", "edge.pad", [x], mode="edge", pads=[0, 0, 1, 1, 0, 0, 1, 1])  # [1, 4, 11, 13]
    x = b.node("Slice", "crop", [x], starts=[1, -5], ends=[100, -1], axes=[2, 3])  # [1, 4, 10, 4]
    b.nodes.append(helper.make_node("Split", [x], ["split_0", "split_1"], name="split", axis=1, split=[1, 3]))
    scales = b.const("upsample_scales", [1.0, 1.0, 2.0, 2.0])
    up0 = b.node("Upsample", "up0", ["split_0", scales], mode="nearest")
    up1 = b.node("Upsample", "up1", ["split_1", scales], mode="nearest")
    joined = b.node("Concat", "join", [up1, up0], axis=1)  # [1, 4, 20, 8]
    channels = b.node("Gather", "view.gather", [b.node("Shape", "view.shape", [joined]), b.const("one", 1, i64)],
                      axis=0)
    channels = b.node("Unsqueeze", "view.unsqueeze", [channels], axes=[0])
    view_shape = b.node("Concat", "view.concat", [b.const("batch", [1], i64), channels, b.const("rest", [-1], i64)],
                        axis=0)
    flat = b.node("Reshape", "view", [joined, view_shape])
    b.node("Softmax", "softmax", [flat], output="scores", axis=2)
    b.node("Gather", "odd_columns", [joined, b.const("odd", [1, 3, 5, 7], i64)], output="strided", axis=3)
    graph = helper.make_graph(
        b.nodes, "small_legacy", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 2, *LEGACY_SHAPE])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 4, 160]),
         helper.make_tensor_value_info("strided", TensorProto.FLOAT, [1, 4, 20, 4]),
         helper.make_tensor_value_info("padded", TensorProto.FLOAT, [1, 2, 11, 13])],
        initializer=list(b.initializers.values()))
    return make_model(graph, opset=9)


def small_legacy_inputs(seed=1031):
    rng = np.random.default_rng(seed)
    return {"input": rng.standard_normal([1, 2, *LEGACY_SHAPE], dtype=np.float32)}
