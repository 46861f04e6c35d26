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


_erf = np.vectorize(math.erf, otypes=[np.float64])

OPS = {
    "Add": lambda i, a: i[0] + i[1],
    "Clip": clip,
    "Conv": conv,
    "Div": lambda i, a: i[0] / i[1],
    "Erf": lambda i, a: _erf(i[0]),
    "Flatten": flatten,
    "Gemm": gemm,
    "GlobalAveragePool": lambda i, a: i[0].mean(axis=tuple(range(2, i[0].ndim)), keepdims=True),
    "LayerNormalization": layer_norm,
    "MatMul": lambda i, a: np.matmul(i[0], i[1]),
    "MaxPool": max_pool,
    "Mul": lambda i, a: i[0] * i[1],
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
        _need(len(node.output) == 1, "one output per node")
        env[node.output[0]] = fn([env[name] if name else None for name in node.input], attrs)
    if keep_all:
        return env
    return {o.name: env[o.name] for o in model.graph.output}
