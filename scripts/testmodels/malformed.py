"""The malformed and unsupported models the importer must reject with a clear error.

CASES lists one Case per file of malformed/: the file name, the substring the
importer's error must contain (the node's name for a node problem, the
tensor's name for a tensor problem, the file's name for a file-level problem),
why the model is rejected, and `build`. For a model case, build(broken) returns
a ModelProto: with broken=False it returns the model's valid twin, which
differs in exactly the one thing that is wrong, so the self-test can show with
onnx.checker that each model is otherwise valid (the checker never sees the
broken ones). File-level cases have no twin; their build returns the bytes.
Names of nodes and tensors are distinct from each other, so an error that
names the wrong thing does not match.
"""
import collections

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from testmodels import vision
from testmodels.builder import make_model

F32, F64, I64, STRING = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.STRING

Case = collections.namedtuple("Case", "file must_contain why build")


def value(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def weights(name, shape, seed=0):
    return const(name, np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def model(nodes, inputs, outputs, initializers=(), **kwargs):
    graph = helper.make_graph(nodes, "malformed", inputs, outputs, initializer=list(initializers))
    return make_model(graph, **kwargs)


def relu_model(input_name, elem_type, shape, **kwargs):
    """input -> Relu -> y: the carrier for cases about a graph input or the model itself."""
    return model([helper.make_node("Relu", [input_name], ["y"], name="relu_0")],
                 [value(input_name, elem_type, shape)], [value("y", elem_type, shape)], **kwargs)


def conv_model(node_name, x_shape, w_shape, y_shape, w_tensor=None, **attrs):
    w_tensor = w_tensor or weights("conv_weight", w_shape)
    node = helper.make_node("Conv", ["x", w_tensor.name], ["y"], name=node_name, **attrs)
    return model([node], [value("x", F32, x_shape)], [value("y", F32, y_shape)], [w_tensor])


def truncated_small_cnn():
    data = vision.small_cnn().SerializeToString()
    return data[:len(data) // 2]


def unknown_op(broken):
    op = "FooBar" if broken else "Relu"
    return model([helper.make_node(op, ["x"], ["y"], name="mystery_0")], [value("x", F32, [1, 16])],
                 [value("y", F32, [1, 16])])


def unknown_domain(broken):
    domain = "com.example.unknown" if broken else ""
    node = helper.make_node("Relu", ["x"], ["y"], name="relu_custom_domain", domain=domain)
    return model([node], [value("x", F32, [1, 16])], [value("y", F32, [1, 16])],
                 extra_opsets=[("com.example.unknown", 1)])


def external_data(broken):
    # 16384 x 32768 f32 is exactly 2 GiB, the length the external reference claims.
    rows, cols = (16384, 32768) if broken else (16, 32)
    if broken:
        w = TensorProto(name="fc_weight_external", data_type=F32, dims=[rows, cols],
                        data_location=TensorProto.EXTERNAL)
        for key, val in [("location", "weights_2gb.bin"), ("offset", "0"), ("length", str(rows * cols * 4))]:
            entry = w.external_data.add()
            entry.key, entry.value = key, val
    else:
        w = weights("fc_weight_external", [rows, cols])
    node = helper.make_node("Gemm", ["features", w.name], ["scores"], name="fc_0", transB=1)
    return model([node], [value("features", F32, [1, cols])], [value("scores", F32, [1, rows])], [w])


def undefined_input(broken):
    other = "ghost_tensor" if broken else "x"
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu_0"),
             helper.make_node("Add", ["a", other], ["y"], name="add_0")]
    return model(nodes, [value("x", F32, [1, 16])], [value("y", F32, [1, 16])])


def duplicate_output(broken):
    second = "dup_tensor" if broken else "second_tensor"
    nodes = [helper.make_node("Relu", ["x"], ["dup_tensor"], name="relu_first"),
             helper.make_node("Relu", ["x"], [second], name="relu_second"),
             helper.make_node("Add", ["dup_tensor", "x"], ["y"], name="add_0")]
    return model(nodes, [value("x", F32, [1, 16])], [value("y", F32, [1, 16])])


def no_nodes(broken):
    if broken:  # the graph output is the graph input itself
        return model([], [value("x", F32, [1, 16])], [value("x", F32, [1, 16])])
    return relu_model("x", F32, [1, 16])


def conv_rank3(broken):
    if broken:  # a 1-D convolution: valid ONNX, but not a 2-D image layer
        return conv_model("conv1d_0", [1, 3, 32], [8, 3, 3], [1, 8, 32], kernel_shape=[3], pads=[1, 1], strides=[1])
    return conv_model("conv1d_0", [1, 3, 32, 32], [8, 3, 3, 3], [1, 8, 32, 32], kernel_shape=[3, 3], pads=[1] * 4,
                      strides=[1, 1])


def add_broadcast(broken):
    rhs = weights("rhs_const", [1, 8, 3, 3] if broken else [1, 8, 4, 4])
    node = helper.make_node("Add", ["lhs", "rhs_const"], ["y"], name="add_mismatch")
    return model([node], [value("lhs", F32, [1, 8, 4, 4])], [value("y", F32, [1, 8, 4, 4])], [rhs])


def reshape_dynamic(broken):
    node = helper.make_node("Reshape", ["x", "target_shape"], ["y"], name="reshape_dynamic")
    inputs, inits = [value("x", F32, [1, 8, 4, 4])], []
    if broken:
        inputs.append(value("target_shape", I64, [2]))
    else:
        inits.append(const("target_shape", np.array([1, 128], dtype=np.int64)))
    return model([node], inputs, [value("y", F32, [1, 128])], inits)


def double_input(broken):
    return relu_model("x_double", F64 if broken else F32, [1, 16])


def string_tensor(broken):
    node = helper.make_node("Cast", ["tokens_string"], ["tokens_f32"], name="cast_0", to=F32)
    relu = helper.make_node("Relu", ["tokens_f32"], ["y"], name="relu_0")
    return model([node, relu], [value("tokens_string", STRING if broken else F32, [1, 4])], [value("y", F32, [1, 4])])


def float_strides(broken):
    strides = [2.0, 2.0] if broken else [2, 2]
    return conv_model("conv_float_strides", [1, 3, 8, 8], [4, 3, 3, 3], [1, 4, 4, 4], kernel_shape=[3, 3],
                      pads=[1] * 4, strides=strides)


def raw_size_mismatch(broken):
    w = weights("conv_weight_short", [8, 3, 3, 3])
    if broken:
        w.raw_data = w.raw_data[:100]  # 100 bytes where [8, 3, 3, 3] f32 needs 864
    return conv_model("conv_0", [1, 3, 8, 8], None, [1, 8, 8, 8], w_tensor=w, kernel_shape=[3, 3], pads=[1] * 4)


def gemm_inner(broken):
    w = weights("gemm_weight", [10, 12 if broken else 16])
    node = helper.make_node("Gemm", ["features", "gemm_weight", "gemm_bias"], ["y"], name="gemm_mismatch", transB=1)
    return model([node], [value("features", F32, [1, 16])], [value("y", F32, [1, 10])],
                 [w, weights("gemm_bias", [10], seed=1)])


def output_never_produced(broken):
    produced = "relu_y" if broken else "phantom_logits"
    node = helper.make_node("Relu", ["x"], [produced], name="relu_0")
    return model([node], [value("x", F32, [1, 16])], [value("phantom_logits", F32, [1, 16])])


def group_indivisible(broken):
    channels = 8 if broken else 6  # group 3 divides the 6 output channels, not 8 input channels
    return conv_model("conv_group3", [1, channels, 6, 6], [6, 2, 3, 3], [1, 6, 6, 6], group=3, kernel_shape=[3, 3],
                      pads=[1] * 4)


def maxpool_ceil(broken):
    # 10 wide, 3x3 stride 2: floor mode gives 4 columns, ceil mode 5.
    out = 5 if broken else 4
    node = helper.make_node("MaxPool", ["x"], ["y"], name="pool_ceil", kernel_shape=[3, 3], strides=[2, 2],
                            ceil_mode=1 if broken else 0)
    return model([node], [value("x", F32, [1, 8, 10, 10])], [value("y", F32, [1, 8, out, out])])


def zero_dim(broken):
    return relu_model("empty_rows", F32, [0 if broken else 1, 16])


def symbolic_dim(broken):
    return relu_model("dynamic_images", F32, ["batch" if broken else 1, 3, 8, 8])


def opset_30(broken):
    return relu_model("x", F32, [1, 16], opset=30 if broken else 17)


def ir_version_99(broken):
    return relu_model("x", F32, [1, 16], ir_version=99 if broken else 8)


def cycle(broken):
    read = "cycle_b_out" if broken else "x"
    nodes = [helper.make_node("Add", ["x", read], ["cycle_a_out"], name="cycle_node_a"),
             helper.make_node("Relu", ["cycle_a_out"], ["cycle_b_out"], name="cycle_node_b")]
    return model(nodes, [value("x", F32, [1, 16])], [value("cycle_a_out", F32, [1, 16])])


def pad_dynamic(broken):
    node = helper.make_node("Pad", ["x", "border_pads"], ["y"], name="pad_dynamic_pads", mode="constant")
    inputs, inits = [value("x", F32, [1, 2, 4, 4])], []
    if broken:
        inputs.append(value("border_pads", I64, [8]))
    else:
        inits.append(const("border_pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64)))
    return model([node], inputs, [value("y", F32, [1, 2, 6, 6])], inits)


def slice_dynamic(broken):
    node = helper.make_node("Slice", ["x", "crop_starts", "crop_ends", "crop_axes"], ["y"], name="slice_dynamic_starts")
    inputs = [value("x", F32, [1, 16])]
    inits = [const("crop_ends", np.array([12], dtype=np.int64)), const("crop_axes", np.array([1], dtype=np.int64))]
    if broken:
        inputs.append(value("crop_starts", I64, [1]))
    else:
        inits.append(const("crop_starts", np.array([4], dtype=np.int64)))
    return model([node], inputs, [value("y", F32, [1, 8])], inits)


def shape_unfoldable(broken):
    # ConstantOfShape of a shape given at run time: its value never folds to a constant.
    fill = helper.make_node("ConstantOfShape", ["fill_shape"], ["ones"], name="fill_dynamic",
                            value=helper.make_tensor("one", F32, [1], [1.0]))
    add = helper.make_node("Add", ["x", "ones"], ["y"], name="add_0")
    inputs, inits = [value("x", F32, [1, 16])], []
    if broken:
        inputs.append(value("fill_shape", I64, [2]))
    else:
        inits.append(const("fill_shape", np.array([1, 16], dtype=np.int64)))
    return model([fill, add], inputs, [value("y", F32, [1, 16])], inits)


def range_dynamic(broken):
    # Range to a limit given at run time: its output's length would depend on a value.
    rng = helper.make_node("Range", ["range_start", "range_limit", "range_delta"], ["positions"], name="range_dynamic")
    cast = helper.make_node("Cast", ["positions"], ["positions_f32"], name="cast_0", to=F32)
    add = helper.make_node("Add", ["x", "positions_f32"], ["y"], name="add_0")
    inputs = [value("x", F32, [1, 16])]
    inits = [const("range_start", np.array(0, dtype=np.int64)), const("range_delta", np.array(1, dtype=np.int64))]
    if broken:
        inputs.append(value("range_limit", I64, []))
    else:
        inits.append(const("range_limit", np.array(16, dtype=np.int64)))
    return model([rng, cast, add], inputs, [value("y", F32, [1, 16])], inits)


def resize_linear(broken):
    node = helper.make_node("Resize", ["x", "", "resize_scales"], ["y"], name="upsample_linear",
                            mode="linear" if broken else "nearest", coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor")
    return model([node], [value("x", F32, [1, 2, 4, 4])], [value("y", F32, [1, 2, 8, 8])],
                 [const("resize_scales", np.array([1, 1, 2, 2], dtype=np.float32))])


def pad_reflect_wide(broken):
    width = 4 if broken else 3  # reflect reaches at most size - 1 elements past an edge
    node = helper.make_node("Pad", ["x", "mirror_pads"], ["y"], name="pad_reflect_wide", mode="reflect")
    return model([node], [value("x", F32, [1, 2, 4, 4])], [value("y", F32, [1, 2, 4, 4 + 2 * width])],
                 [const("mirror_pads", np.array([0, 0, 0, width, 0, 0, 0, width], dtype=np.int64))])


def gather_scattered(broken):
    # 65 (or 64) token positions in no arithmetic order: too many to select between.
    count = 65 if broken else 64
    picks = (np.arange(count) * 37 % 97).astype(np.int64)
    node = helper.make_node("Gather", ["tokens", "scattered_ids"], ["y"], name="gather_scattered", axis=1)
    return model([node], [value("tokens", F32, [1, 97, 4])], [value("y", F32, [1, count, 4])],
                 [const("scattered_ids", picks)])


CASES = [
    Case("truncated.onnx", "truncated.onnx", "a valid model (small_cnn) cut in half", truncated_small_cnn),
    Case("not_onnx.onnx", "not_onnx.onnx", "a text file, not a protobuf",
         lambda: b"This is a text file named .onnx; it holds no ONNX model.\n"),
    Case("empty.onnx", "empty.onnx", "zero bytes: parses as a ModelProto with no graph", lambda: b""),
    Case("unknown_op.onnx", "mystery_0", "op type FooBar is not an ONNX op", unknown_op),
    Case("unknown_domain.onnx", "relu_custom_domain", "Relu from domain com.example.unknown", unknown_domain),
    Case("symbolic_dim.onnx", "dynamic_images", "input dimension 'batch' has no value", symbolic_dim),
    Case("opset_30.onnx", "opset_30.onnx", "ai.onnx opset 30 is newer than any known", opset_30),
    Case("ir_version_99.onnx", "ir_version_99.onnx", "IR version 99 is newer than any known", ir_version_99),
    Case("external_data.onnx", "fc_weight_external",
         "2 GiB of external data in weights_2gb.bin, which does not exist", external_data),
    Case("undefined_input.onnx", "ghost_tensor", "a node reads a tensor nothing defines", undefined_input),
    Case("duplicate_output.onnx", "dup_tensor", "two nodes write the same tensor", duplicate_output),
    Case("no_nodes.onnx", "no_nodes.onnx", "the graph has no nodes (its output is its input)", no_nodes),
    Case("conv_rank3.onnx", "conv1d_0", "Conv on a rank-3 input (1-D convolution)", conv_rank3),
    Case("add_broadcast.onnx", "add_mismatch", "Add of [1,8,4,4] and [1,8,3,3] does not broadcast", add_broadcast),
    Case("reshape_dynamic.onnx", "reshape_dynamic", "Reshape's shape is a graph input, not a constant",
         reshape_dynamic),
    Case("double_input.onnx", "x_double", "f64 (double) graph input", double_input),
    Case("string_tensor.onnx", "tokens_string", "string graph input (cast to f32)", string_tensor),
    Case("float_strides.onnx", "conv_float_strides", "Conv strides given as floats", float_strides),
    Case("raw_size_mismatch.onnx", "conv_weight_short", "raw data 100 bytes for f32[8,3,3,3] (864)",
         raw_size_mismatch),
    Case("gemm_inner.onnx", "gemm_mismatch", "Gemm of [1,16] by [10,12]^T: inner 16 vs 12", gemm_inner),
    Case("output_never_produced.onnx", "phantom_logits", "the graph output is written by no node",
         output_never_produced),
    Case("group_indivisible.onnx", "conv_group3", "Conv group 3 does not divide 8 input channels",
         group_indivisible),
    Case("maxpool_ceil.onnx", "pool_ceil", "MaxPool ceil_mode=1 where it adds a row and column (5 not 4)",
         maxpool_ceil),
    Case("zero_dim.onnx", "empty_rows", "input with a zero-size dimension", zero_dim),
    Case("cycle.onnx", "cycle_node_", "two nodes read each other's output", cycle),
    Case("pad_dynamic.onnx", "pad_dynamic_pads", "Pad's pads are a graph input, not a constant", pad_dynamic),
    Case("slice_dynamic.onnx", "slice_dynamic_starts", "Slice's starts are a graph input, not a constant",
         slice_dynamic),
    Case("shape_unfoldable.onnx", "fill_dynamic", "ConstantOfShape of a run-time shape does not fold",
         shape_unfoldable),
    Case("range_dynamic.onnx", "range_dynamic", "Range to a limit that is a graph input does not fold",
         range_dynamic),
    Case("resize_linear.onnx", "upsample_linear", "Resize in linear mode (nearest only)", resize_linear),
    Case("pad_reflect_wide.onnx", "pad_reflect_wide", "reflect Pad of 4 on an axis of 4 (at most 3)",
         pad_reflect_wide),
    Case("gather_scattered.onnx", "gather_scattered", "Gather of 65 constant unordered indices from an activation",
         gather_scattered),
]

FILE_LEVEL = {"truncated.onnx", "not_onnx.onnx", "empty.onnx"}


def build_broken(case):
    """The bytes of the file: a model case serialized, or a file-level case's bytes."""
    if case.file in FILE_LEVEL:
        return case.build()
    return case.build(True).SerializeToString()


def build_twin(case):
    return None if case.file in FILE_LEVEL else case.build(False)
