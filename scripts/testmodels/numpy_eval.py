"""A float64 numpy evaluator for the ONNX ops the test models use.

OPS maps an op type to a function (inputs, attrs) -> output array; `run_graph`
walks a model's nodes in order, computing every float tensor in float64 from the
f32 initializers and inputs, and returns the graph outputs. It serves as the
reference the importer's results are compared with, so it implements only what
the test models need and raises on anything else (an attribute value it does
not handle, an op it does not know) rather than guess.
"""
import math

import numpy as np
from onnx import helper, numpy_helper


class Unsupported(Exception):
    pass


def _need(condition, what):
    if not condition:
        raise Unsupported(what)


def _spatial(attrs, kernel):
    """(strides, dilations, pads as (top, left, bottom, right)) of a 2-D Conv or pool."""
    _need(attrs.get("auto_pad", b"NOTSET") == b"NOTSET", "auto_pad")
    strides = list(attrs.get("strides", [1, 1]))
    dilations = list(attrs.get("dilations", [1, 1]))
    pads = list(attrs.get("pads", [0, 0, 0, 0]))
    _need(len(kernel) == 2 and len(strides) == 2 and len(dilations) == 2 and len(pads) == 4, "2-D only")
    return strides, dilations, pads


def _out_size(size, kernel, stride, dilation, pad_begin, pad_end):
    return (size + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1


def _windows(xp, kernel, strides, dilations, out_hw):
    """Yields ((i, j), view) for each kernel tap: the strided view of the padded input it reads."""
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out_hw
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            yield (i, j), xp[..., i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]


def conv(inputs, attrs):
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    _need(x.ndim == 4 and w.ndim == 4, "Conv rank")
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    group = attrs.get("group", 1)
    _need(c == cg * group and m % group == 0, "Conv channels and group")
    _need(list(attrs.get("kernel_shape", [kh, kw])) == [kh, kw], "kernel_shape")
    strides, dilations, (pt, pl, pb, pr) = _spatial(attrs, [kh, kw])
    oh = _out_size(h, kh, strides[0], dilations[0], pt, pb)
    ow = _out_size(wd, kw, strides[1], dilations[1], pl, pr)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    xg = xp.reshape(n, group, cg, xp.shape[2], xp.shape[3])
    wg = w.reshape(group, m // group, cg, kh, kw)
    out = np.zeros((n, group, oh * ow, m // group))
    # One batched matmul per kernel tap: [n, g, oh*ow, cg] x [g, cg, m/g].
    for (i, j), view in _windows(xg, (kh, kw), strides, dilations, (oh, ow)):
        patch = view.reshape(n, group, cg, oh * ow).transpose(0, 1, 3, 2)
        out += patch @ wg[:, :, :, i, j].transpose(0, 2, 1)
    out = out.transpose(0, 1, 3, 2).reshape(n, m, oh, ow)
    if bias is not None:
        out += bias.reshape(1, m, 1, 1)
    return out


def max_pool(inputs, attrs):
    x = inputs[0]
    _need(attrs.get("ceil_mode", 0) == 0 and attrs.get("storage_order", 0) == 0, "MaxPool ceil_mode / storage_order")
    kernel = list(attrs["kernel_shape"])
    strides, dilations, (pt, pl, pb, pr) = _spatial(attrs, kernel)
    oh = _out_size(x.shape[2], kernel[0], strides[0], dilations[0], pt, pb)
    ow = _out_size(x.shape[3], kernel[1], strides[1], dilations[1], pl, pr)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    out = np.full(x.shape[:2] + (oh, ow), -np.inf)
    for _, view in _windows(xp, kernel, strides, dilations, (oh, ow)):
        out = np.maximum(out, view)
    return out


def gemm(inputs, attrs):
    a, b = inputs[0], inputs[1]
    a = a.T if attrs.get("transA", 0) else a
    b = b.T if attrs.get("transB", 0) else b
    _need(a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0], "Gemm shapes")
    y = attrs.get("alpha", 1.0) * (a @ b)
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + attrs.get("beta", 1.0) * inputs[2]
    return y


def reshape(inputs, attrs):
    x, shape = inputs[0], [int(d) for d in inputs[1]]
    _need(attrs.get("allowzero", 0) == 0, "Reshape allowzero")
    # ONNX: 0 copies the input's dimension, -1 is inferred (numpy does the -1).
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def softmax(inputs, attrs):
    x = inputs[0]
    axis = attrs.get("axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(inputs, attrs):
    x, scale = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    axis = attrs.get("axis", -1) % x.ndim
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + attrs.get("epsilon", 1e-5)) * scale
    return y if bias is None else y + bias


def clip(inputs, attrs):
    lo = inputs[1] if len(inputs) > 1 and inputs[1] is not None else -np.inf
    hi = inputs[2] if len(inputs) > 2 and inputs[2] is not None else np.inf
    return np.clip(inputs[0], lo, hi)


def flatten(inputs, attrs):
    x = inputs[0]
    axis = attrs.get("axis", 1) % (x.ndim + 1)
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def pad(inputs, attrs):
    x = inputs[0]
    if len(inputs) == 1:  # opset < 11: pads and value are attributes
        pads, value = list(attrs["pads"]), float(attrs.get("value", 0.0))
    else:
        pads = [int(p) for p in inputs[1]]
        value = float(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else 0.0
    mode = attrs.get("mode", b"constant").decode()
    _need(mode in ("constant", "reflect", "edge") and min(pads) >= 0, "Pad mode / negative pads")
    rank = x.ndim
    width = [(pads[d], pads[d + rank]) for d in range(rank)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode=mode)


def slice_(inputs, attrs):
    x = inputs[0]
    if len(inputs) == 1:  # opset < 10: attributes, no steps
        inputs = [x, attrs["starts"], attrs["ends"], attrs.get("axes")]
    starts, ends = [int(v) for v in inputs[1]], [int(v) for v in inputs[2]]
    axes = [int(v) for v in inputs[3]] if len(inputs) > 3 and inputs[3] is not None else list(range(len(starts)))
    steps = [int(v) for v in inputs[4]] if len(inputs) > 4 and inputs[4] is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        # numpy's slice clamps as ONNX does, except that an end below -dim means "before the start".
        dim = x.shape[axis]
        end = None if step < 0 and end < -dim else end
        index[axis % x.ndim] = slice(start, end, step)
    return x[tuple(index)]


def split(inputs, attrs):
    x = inputs[0]
    sizes = [int(v) for v in (inputs[1] if len(inputs) > 1 else attrs["split"])]  # an attribute before opset 13
    axis = attrs.get("axis", 0)
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


def gather(inputs, attrs):
    data, indices = inputs[0], np.asarray(inputs[1]).astype(np.int64)
    axis = attrs.get("axis", 0)
    return np.take(data, np.where(indices < 0, indices + data.shape[axis], indices), axis=axis)


def resize(inputs, attrs):
    x, scales = inputs[0], inputs[2]
    _need(attrs.get("mode") == b"nearest" and attrs.get("coordinate_transformation_mode") == b"asymmetric"
          and attrs.get("nearest_mode") == b"floor", "Resize other than nearest / asymmetric / floor")
    return upsample([x, scales], {"mode": b"nearest"})


def upsample(inputs, attrs):
    """Upsample-9 (and Resize's asymmetric / floor nearest): output o reads input floor(o / scale)."""
    x, scales = inputs[0], inputs[1]
    _need(attrs.get("mode", b"nearest") == b"nearest", "Upsample other than nearest")
    for axis, scale in enumerate(scales):
        size = int(np.floor(x.shape[axis] * scale))
        source = np.minimum(np.floor(np.arange(size) / scale).astype(np.int64), x.shape[axis] - 1)
        x = np.take(x, source, axis=axis)
    return x


def concat(inputs, attrs):
    return np.concatenate(inputs, axis=attrs["axis"])


def unsqueeze(inputs, attrs):
    x = inputs[0]
    axes = inputs[1] if len(inputs) > 1 else attrs["axes"]  # an attribute before opset 13
    for axis in sorted(int(a) % (x.ndim + len(axes)) for a in axes):
        x = np.expand_dims(x, axis)
    return x


def constant_of_shape(inputs, attrs):
    value = numpy_helper.to_array(attrs["value"]) if "value" in attrs else np.zeros(1, dtype=np.float32)
    return np.full([int(d) for d in inputs[0]], _to_compute(value)[0])


def reduce_mean(inputs, attrs):
    return inputs[0].mean(axis=tuple(attrs["axes"]), keepdims=bool(attrs.get("keepdims", 1)))


_CAST_TYPES = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}  # TensorProto's codes


def cast(inputs, attrs):
    _need(attrs["to"] in _CAST_TYPES, "Cast to type %d" % attrs["to"])
    return _to_compute(inputs[0].astype(_CAST_TYPES[attrs["to"]]))


def range_(inputs, attrs):
    start, limit, delta = (i.item() for i in inputs)
    count = max(int(math.ceil((limit - start) / delta)), 0)
    return (start + np.arange(count) * delta).astype(inputs[0].dtype)


_erf = np.vectorize(math.erf, otypes=[np.float64])

OPS = {
    "Add": lambda i, a: i[0] + i[1],
    "And": lambda i, a: np.logical_and(i[0], i[1]),
    "Cast": cast,
    "Equal": lambda i, a: i[0] == i[1],
    "Greater": lambda i, a: i[0] > i[1],
    "GreaterOrEqual": lambda i, a: i[0] >= i[1],
    "Less": lambda i, a: i[0] < i[1],
    "LessOrEqual": lambda i, a: i[0] <= i[1],
    "Not": lambda i, a: np.logical_not(i[0]),
    "Or": lambda i, a: np.logical_or(i[0], i[1]),
    "Range": range_,
    "Where": lambda i, a: np.where(i[0], i[1], i[2]),
    "Clip": clip,
    "Concat": concat,
    "ConstantOfShape": constant_of_shape,
    "Expand": lambda i, a: i[0] * np.ones([int(d) for d in i[1]], dtype=i[0].dtype),
    "Conv": conv,
    "Div": lambda i, a: i[0] / i[1],
    "Erf": lambda i, a: _erf(i[0]),
    "Flatten": flatten,
    "Gather": gather,
    "Gemm": gemm,
    "GlobalAveragePool": lambda i, a: i[0].mean(axis=tuple(range(2, i[0].ndim)), keepdims=True),
    "LayerNormalization": layer_norm,
    "MatMul": lambda i, a: np.matmul(i[0], i[1]),
    "MaxPool": max_pool,
    "Mul": lambda i, a: i[0] * i[1],
    "Pad": pad,
    "ReduceMean": reduce_mean,
    "Resize": resize,
    "Shape": lambda i, a: np.array(i[0].shape, dtype=np.int64),
    "Sigmoid": lambda i, a: 1.0 / (1.0 + np.exp(-i[0])),
    "Slice": slice_,
    "Split": split,
    "Tanh": lambda i, a: np.tanh(i[0]),
    "Unsqueeze": unsqueeze,
    "Upsample": upsample,
    "Relu": lambda i, a: np.maximum(i[0], 0.0),
    "Reshape": reshape,
    "Softmax": softmax,
    "Transpose": lambda i, a: np.transpose(i[0], a.get("perm")),
}


def _to_compute(array):
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def run_graph(model, feeds, keep_all=False):
    """Evaluates `model` on `feeds` (name -> array); returns name -> float64 array of the
    graph outputs, or of every tensor with keep_all."""
    env = {t.name: _to_compute(numpy_helper.to_array(t)) for t in model.graph.initializer}
    env.update({name: _to_compute(np.asarray(value)) for name, value in feeds.items()})
    for node in model.graph.node:
        _need(node.domain in ("", "ai.onnx"), "domain " + node.domain)
        fn = OPS.get(node.op_type)
        _need(fn is not None, "op " + node.op_type)
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        result = fn([env[name] if name else None for name in node.input], attrs)
        if node.op_type == "Split":
            _need(len(result) == len(node.output), "Split's outputs")
            env.update(zip(node.output, result))
        else:
            _need(len(node.output) == 1, "one output per node")
            env[node.output[0]] = result
    if keep_all:
        return env
    return {o.name: env[o.name] for o in model.graph.output}
