"""The --self-test of make_test_models.py: checks the numpy evaluator and the models.

The evaluator's vectorised ops are compared with direct nested-loop sums on
tiny odd-sized cases (the data movers with ONNX's index rules written out); both small models are run through the evaluator and
compared with a straight-line reimplementation that shares no code with it;
the large models must keep every activation finite; each malformed model's
valid twin must pass onnx.checker with full_check; the file-level malformed
files must fail to parse (or parse empty). `run()` returns the failures.
"""
import itertools
import math
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

from testmodels import malformed, numpy_eval, transformer, vision

TOLERANCE = 1e-9  # both sides compute in float64


def conv_loops(x, w, bias, strides, pads, dilations, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilations, pads
    oh, ow = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1, (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, m, oh, ow))
    for b, k, oy, ox in itertools.product(range(n), range(m), range(oh), range(ow)):
        g = k // (m // group)
        acc = 0.0 if bias is None else bias[k]
        for ci, ky, kx in itertools.product(range(cg), range(kh), range(kw)):
            iy, ix = oy * sh - pt + ky * dh, ox * sw - pl + kx * dw
            if 0 <= iy < h and 0 <= ix < wd:
                acc += x[b, g * cg + ci, iy, ix] * w[k, ci, ky, kx]
        out[b, k, oy, ox] = acc
    return out


def max_pool_loops(x, kernel, stride, pad):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * pad - kernel) // stride + 1, (w + 2 * pad - kernel) // stride + 1
    out = np.zeros((n, c, oh, ow))
    for b, ch, oy, ox in itertools.product(range(n), range(c), range(oh), range(ow)):
        best = -math.inf
        for ky, kx in itertools.product(range(kernel), range(kernel)):
            iy, ix = oy * stride - pad + ky, ox * stride - pad + kx
            if 0 <= iy < h and 0 <= ix < w:
                best = max(best, x[b, ch, iy, ix])
        out[b, ch, oy, ox] = best
    return out


def layer_norm_rows(x, scale, bias, eps):
    rows = x.reshape(-1, x.shape[-1])
    out = np.zeros_like(rows)
    for r, row in enumerate(rows):
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        out[r] = [(v - mean) / math.sqrt(var + eps) * s + b for v, s, b in zip(row, scale, bias)]
    return out.reshape(x.shape)


def softmax_rows(x):
    out = np.zeros_like(x)
    for r, row in enumerate(x):
        e = [math.exp(v - max(row)) for v in row]
        out[r] = [v / sum(e) for v in e]
    return out


class Checker:
    def __init__(self):
        self.failures = []
        self.count = 0

    def close(self, what, got, want, tol=TOLERANCE):
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            self.true("%s: shape %s, expected %s" % (what, got.shape, want.shape), False)
        else:
            difference = float(np.abs(got - want).max()) if got.size else 0.0
            self.true("%s: max difference %g" % (what, difference), np.allclose(got, want, rtol=tol, atol=tol))

    def true(self, what, condition):
        self.count += 1
        if not condition:
            self.failures.append(what)


def check_ops(ck, rng):
    for shape, w_shape, strides, pads, dilations, group, bias in [
            ((1, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
            ((2, 4, 9, 8), (6, 2, 3, 2), (2, 3), (0, 1, 2, 0), (1, 2), 2, False),
            ((1, 5, 8, 7), (5, 1, 3, 3), (2, 2), (1, 1, 1, 1), (2, 1), 5, True),  # depthwise
            ((1, 3, 11, 9), (2, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, True),
            ((1, 6, 5, 5), (4, 6, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, False)]:
        x, w = rng.standard_normal(shape), rng.standard_normal(w_shape)
        b = rng.standard_normal(w_shape[0]) if bias else None
        attrs = {"strides": strides, "pads": pads, "dilations": dilations, "group": group}
        got = numpy_eval.conv([x, w] + ([b] if bias else []), attrs)
        ck.close("Conv %s * %s %s" % (shape, w_shape, attrs), got, conv_loops(x, w, b, strides, pads, dilations, group))
    x = rng.standard_normal((1, 3, 9, 10))
    got = numpy_eval.max_pool([x], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    ck.close("MaxPool 3x3 s2 p1", got, max_pool_loops(x, 3, 2, 1))
    a, bt, c = rng.standard_normal((3, 5)), rng.standard_normal((4, 5)), rng.standard_normal(4)
    want = [[0.5 * sum(a[i, k] * bt[j, k] for k in range(5)) + 2.0 * c[j] for j in range(4)] for i in range(3)]
    ck.close("Gemm transB alpha beta", numpy_eval.gemm([a, bt, c], {"transB": 1, "alpha": 0.5, "beta": 2.0}), want)
    x = rng.standard_normal((6, 7)) * 5
    ck.close("Softmax", numpy_eval.softmax([x], {"axis": -1}), softmax_rows(x))
    x, s, b = rng.standard_normal((2, 3, 8)), rng.standard_normal(8), rng.standard_normal(8)
    ck.close("LayerNormalization", numpy_eval.layer_norm([x, s, b], {"axis": -1, "epsilon": 1e-12}),
             layer_norm_rows(x, s, b, 1e-12))
    ck.close("Erf", numpy_eval.OPS["Erf"]([np.array([0.0, 1.0, -0.5])], {}),
             [0.0, 0.8427007929497149, -0.5204998778130465])
    x = np.arange(24.0).reshape(2, 3, 4)
    ck.close("Reshape 0 / -1", numpy_eval.reshape([x, np.array([0, -1])], {}), x.reshape(2, 12))
    ck.close("Transpose", numpy_eval.OPS["Transpose"]([x], {"perm": [2, 0, 1]})[3, 1, 2], x[1, 2, 3])
    ck.close("Flatten", numpy_eval.flatten([x.reshape(2, 3, 2, 2)], {"axis": 1}), x.reshape(2, 12))
    ck.close("Clip", numpy_eval.clip([np.array([-1.0, 3.0, 7.0]), np.array(0.0), np.array(6.0)], {}), [0, 3, 6])
    ck.close("GlobalAveragePool", numpy_eval.OPS["GlobalAveragePool"]([x.reshape(1, 2, 3, 4)], {})[0, 1, 0, 0],
             np.mean(x[1]))


def pad_index(i, begin, size, mode):
    """The input index output index i reads along one axis, or None for the constant."""
    j = i - begin
    if 0 <= j < size:
        return j
    if mode == "edge":
        return min(max(j, 0), size - 1)
    if mode == "reflect":
        return -j if j < 0 else 2 * (size - 1) - j
    return None


def onnx_slice_indices(dim, start, end, step):
    """ONNX Slice's rule for one axis, written out: the input indices in output order."""
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    out, i = [], start
    while (i < end) if step > 0 else (i > end):
        out.append(i)
        i += step
    return out


def check_data_ops(ck, rng):
    x = rng.standard_normal((1, 2, 4, 5))
    for mode, value in (("constant", 0.5), ("reflect", 0.0), ("edge", 0.0)):
        pads = [0, 0, 2, 1, 0, 0, 3, 2] if mode != "reflect" else [0, 0, 3, 1, 0, 0, 2, 4]
        got = numpy_eval.pad([x, np.array(pads), np.array(value)], {"mode": mode.encode()})
        want = np.full((1, 2, 4 + pads[2] + pads[6], 5 + pads[3] + pads[7]), value)
        for c, i, j in itertools.product(range(2), range(want.shape[2]), range(want.shape[3])):
            si, sj = pad_index(i, pads[2], 4, mode), pad_index(j, pads[3], 5, mode)
            if si is not None and sj is not None:
                want[0, c, i, j] = x[0, c, si, sj]
        ck.close("Pad %s" % mode, got, want)
    x = rng.standard_normal((3, 7, 6))
    for starts, ends, axes, steps in (([-1, 1], [-100, 12], [-1, 1], [-2, 2]), ([5], [2**62], [1], [1]),
                                      ([0, 6], [3, 0], [0, 2], [1, -1])):
        got = numpy_eval.slice_([x, np.array(starts), np.array(ends), np.array(axes), np.array(steps)], {})
        picks = [list(range(n)) for n in x.shape]
        for start, end, axis, step in zip(starts, ends, axes, steps):
            picks[axis % 3] = onnx_slice_indices(x.shape[axis % 3], start, end, step)
        ck.close("Slice %s %s %s %s" % (starts, ends, axes, steps), got, x[np.ix_(*picks)])
    table, ids = rng.standard_normal((6, 3)), np.array([[0, -1], [5, 2]])
    got = numpy_eval.gather([table, ids], {"axis": 0})
    ck.close("Gather", got, [[table[0], table[5]], [table[5], table[2]]])
    x = rng.standard_normal((1, 2, 3, 2))
    got = numpy_eval.upsample([x, np.array([1.0, 1.0, 2.0, 3.0])], {"mode": b"nearest"})
    want = [[[[x[0, c, i // 2, j // 3] for j in range(6)] for i in range(6)] for c in range(2)]]
    ck.close("Upsample nearest", got, want)
    parts = numpy_eval.split([np.arange(10.0).reshape(1, 10)], {"axis": 1, "split": [3, 7]})
    ck.close("Split", np.concatenate([p.ravel() * (k + 1) for k, p in enumerate(parts)]),
             [0, 1, 2] + [2 * v for v in range(3, 10)])


def weights_of(model):
    return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}


def small_cnn_direct(model, x):
    """small_cnn written out from the nested-loop references, not the evaluator."""
    p = weights_of(model)
    a = np.maximum(conv_loops(x, p["conv0.weight"], p["conv0.bias"], (2, 2), (1, 1, 1, 1), (1, 1), 1), 0)
    y = np.clip(conv_loops(a, p["dwconv1.weight"], p["dwconv1.bias"], (1, 1), (1, 1, 1, 1), (1, 1), 8), 0, 6)
    y = conv_loops(y, p["conv2.weight"], p["conv2.bias"], (1, 1), (0, 0, 0, 0), (1, 1), 1)
    y = max_pool_loops(np.maximum(y + a, 0), 3, 2, 1)
    y = conv_loops(y, p["conv4.weight"], None, (1, 1), (0, 0, 0, 0), (1, 1), 1)
    features = y.mean(axis=(2, 3))
    return features @ p["fc.weight"].T + p["fc.bias"]


def small_transformer_direct(model, hidden, mask):
    """small_transformer written out per head and per row, not through the evaluator."""
    p, size = weights_of(model), transformer.SMALL
    d = size.hidden // size.heads
    h = hidden[0].astype(np.float64)

    def dense(name, x):
        return x @ p[name + ".weight"] + p[name + ".bias"]

    q, k, v = (dense("attention.self." + n, h) for n in ("query", "key", "value"))
    context = np.zeros_like(h)
    for head in range(size.heads):
        cols = slice(head * d, (head + 1) * d)
        scores = q[:, cols] @ k[:, cols].T / p["attention_scale"] + mask[0, 0, 0]
        context[:, cols] = softmax_rows(scores) @ v[:, cols]
    a = layer_norm_rows(dense("attention.output.dense", context) + h, p["attention.output.LayerNorm.weight"],
                        p["attention.output.LayerNorm.bias"], 1e-12)
    x = dense("intermediate.dense", a)
    # The model's constants are f32: its sqrt(2) and sqrt(head size) are rounded ones.
    gelu = np.vectorize(lambda t: 0.5 * t * (1.0 + math.erf(t / p["gelu_sqrt2"])))(x)
    y = dense("output.dense", gelu) + a
    return layer_norm_rows(y, p["output.LayerNorm.weight"], p["output.LayerNorm.bias"], 1e-12)[None]


def check_models(ck):
    cnn, cnn_in = vision.small_cnn(), vision.small_cnn_inputs()
    ck.close("small_cnn graph vs direct", numpy_eval.run_graph(cnn, cnn_in)["logits"],
             small_cnn_direct(cnn, cnn_in["input"].astype(np.float64)))
    tr, tr_in = transformer.small_transformer(), transformer.small_transformer_inputs()
    ck.close("small_transformer graph vs direct", numpy_eval.run_graph(tr, tr_in)["out"],
             small_transformer_direct(tr, tr_in["hidden"], tr_in["mask"].astype(np.float64)))
    rng = np.random.default_rng(5)
    for build in (vision.resnet50, vision.mobilenet_v2, transformer.bert_layer):
        model = build()
        feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim], dtype=np.float32)
                 for i in model.graph.input}
        if "mask" in feeds:
            feeds["mask"] = transformer.encoder_inputs(transformer.BERT_BASE, 0)["mask"]
        env = numpy_eval.run_graph(model, feeds, keep_all=True)
        # The largest magnitude is the attention mask's -1e4 (bert_layer); a blown-up net goes far past.
        worst = max(float(np.abs(t).max()) for t in env.values() if t.dtype == np.float64)
        out = env[model.graph.output[0].name]
        ck.true("%s: largest activation %g is not finite or over 1e5" % (model.graph.name, worst), worst < 1e5)
        ck.true("%s: output is constant" % model.graph.name, float(out.std()) > 1e-3)


def check_malformed(ck):
    for case in malformed.CASES:
        twin = malformed.build_twin(case)
        if twin is None:
            continue
        try:
            onnx.checker.check_model(twin, full_check=True)
            error = None
        except Exception as e:  # onnx raises several types; any of them is a failure here
            error = str(e).splitlines()[0]
        ck.true("%s: the valid twin is rejected: %s" % (case.file, error), error is None)
        ck.true(case.file + ": broken model equals its twin",
                malformed.build_broken(case) != twin.SerializeToString())
    for name in ("truncated.onnx", "not_onnx.onnx"):
        case = next(c for c in malformed.CASES if c.file == name)
        try:
            with warnings.catch_warnings():  # protobuf warns as well as raising
                warnings.simplefilter("ignore")
                onnx.load_model_from_string(case.build())
            parsed = True
        except Exception:  # the protobuf decode error type depends on the protobuf backend
            parsed = False
        ck.true(name + ": parses as a ModelProto", not parsed)
    empty = onnx.load_model_from_string(b"")
    ck.true("empty.onnx: parses to a model with a graph", not empty.HasField("graph"))
    pool = next(c for c in malformed.CASES if c.file == "maxpool_ceil.onnx").build(True)
    try:
        numpy_eval.run_graph(pool, {"x": np.zeros((1, 8, 10, 10), dtype=np.float32)})
        refused = False
    except numpy_eval.Unsupported:
        refused = True
    ck.true("the evaluator ran MaxPool with ceil_mode=1 instead of refusing", refused)


def run():
    ck = Checker()
    check_ops(ck, np.random.default_rng(2024))
    check_data_ops(ck, np.random.default_rng(2025))
    check_models(ck)
    check_malformed(ck)
    return ck.count, ck.failures
