#!/usr/bin/env python3
"""Generates the layer suite, configs/layers/: one workload file per distinct layer.

The suite holds every distinct convolution, depthwise convolution, dense and
batch-matmul layer of ResNet-50 (torchvision v1.5, batch 1 and batch 8),
MobileNet-V2 (width 1.0, 224 x 224, batch 1), a BERT-base encoder layer
(batch 1, sequence 128) and the two classifier heads (1000 classes, batch 1).
Layers with the same shape and op are one file, which lists every use; the
manifest, layers.tsv, has one row per file for the layer benchmark
(bench/layers/) and the tests. The file conventions are described in
configs/layers/README.md.

Usage: scripts/make_layer_suite.py [--out DIR] [--check]
  --out DIR   where to write (default: configs/layers next to this script)
  --check     write nothing; exit 1 if a generated file differs from DIR's,
              or DIR holds a .tf file the script does not generate
"""
import argparse
import collections
import os
import sys

Conv = collections.namedtuple("Conv", "n c h w k r s stride pad")
Depthwise = collections.namedtuple("Depthwise", "n c h w r s stride pad")
Dense = collections.namedtuple("Dense", "m n k act")
BatchMatmul = collections.namedtuple("BatchMatmul", "b m n k transposed")

# One use of a layer: the model key, the layer's module name, its shape.
Use = collections.namedtuple("Use", "model name spec")

MODEL_TITLES = {
    "resnet50": "ResNet-50 (torchvision v1.5: stride in the 3x3, 1x1 stride-2 downsample)",
    "mobilenet_v2": "MobileNet-V2 (torchvision, width 1.0, 224 x 224)",
    "bert": "BERT-base encoder layer (sequence 128, 12 heads of 64, hidden 768)",
}

GELU_ERF_SCALE = "0.7071067811865476"  # 1 / sqrt(2)


def conv_out(size, kernel, stride, pad):
    return (size + 2 * pad - kernel) // stride + 1


def resnet50(batch):
    """The 53 convolutions of ResNet-50 at `batch`, as torchvision names them."""
    uses = [Use("resnet50", "conv1", Conv(batch, 3, 224, 224, 64, 7, 7, 2, 3))]
    size, channels = 56, 64  # after the stem's 3x3 stride-2 max pool
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for block in range(blocks):
            prefix = "layer%d.%d" % (stage, block)
            s = stride if block == 0 else 1
            out_size = conv_out(size, 3, s, 1)
            uses.append(Use("resnet50", prefix + ".conv1", Conv(batch, channels, size, size, width, 1, 1, 1, 0)))
            uses.append(Use("resnet50", prefix + ".conv2", Conv(batch, width, size, size, width, 3, 3, s, 1)))
            uses.append(Use("resnet50", prefix + ".conv3", Conv(batch, width, out_size, out_size, 4 * width, 1, 1, 1, 0)))
            if block == 0:
                uses.append(Use("resnet50", prefix + ".downsample.0",
                                Conv(batch, channels, size, size, 4 * width, 1, 1, s, 0)))
            channels, size = 4 * width, out_size
    assert (channels, size) == (2048, 7)
    return uses


def mobilenet_v2():
    """The 52 convolutions and the classifier of MobileNet-V2, batch 1."""
    uses = [Use("mobilenet_v2", "features.0.0", Conv(1, 3, 224, 224, 32, 3, 3, 2, 1))]
    size, channels, index = 112, 32, 1
    # Inverted residual settings (expansion t, output channels c, blocks n, first stride s).
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for block in range(n):
            stride = s if block == 0 else 1
            hidden = channels * t
            prefix = "features.%d.conv" % index
            part = 0
            if t != 1:
                uses.append(Use("mobilenet_v2", prefix + ".0.0", Conv(1, channels, size, size, hidden, 1, 1, 1, 0)))
                part = 1
            uses.append(Use("mobilenet_v2", "%s.%d.0" % (prefix, part), Depthwise(1, hidden, size, size, 3, 3, stride, 1)))
            size = conv_out(size, 3, stride, 1)
            uses.append(Use("mobilenet_v2", "%s.%d" % (prefix, part + 1), Conv(1, hidden, size, size, c, 1, 1, 1, 0)))
            channels, index = c, index + 1
    assert (channels, size, index) == (320, 7, 18)
    uses.append(Use("mobilenet_v2", "features.18.0", Conv(1, 320, 7, 7, 1280, 1, 1, 1, 0)))
    uses.append(Use("mobilenet_v2", "classifier.1", Dense(1, 1000, 1280, "none")))
    return uses


def bert():
    """The dense and batch-matmul layers of one BERT-base encoder layer, batch 1, sequence 128."""
    tokens, hidden, heads, head_size, intermediate = 128, 768, 12, 64, 3072
    projection = Dense(tokens, hidden, hidden, "none")
    return [
        Use("bert", "attention.self.query", projection),
        Use("bert", "attention.self.key", projection),
        Use("bert", "attention.self.value", projection),
        Use("bert", "attention.output.dense", projection),
        # The same three projections as one layer, as fused implementations run them.
        Use("bert", "attention.self.query_key_value(fused)", Dense(tokens, 3 * hidden, hidden, "none")),
        Use("bert", "attention.self.scores(QK^T)", BatchMatmul(heads, tokens, tokens, head_size, True)),
        Use("bert", "attention.self.context(PV)", BatchMatmul(heads, tokens, head_size, tokens, False)),
        Use("bert", "intermediate.dense", Dense(tokens, intermediate, hidden, "gelu_erf")),
        Use("bert", "output.dense", Dense(tokens, hidden, intermediate, "none")),
    ]


def all_uses():
    return (resnet50(1) + resnet50(8) + mobilenet_v2() + [Use("resnet50", "fc", Dense(1, 1000, 2048, "none"))] +
            bert())


def batch_of(spec):
    if isinstance(spec, (Conv, Depthwise)):
        return spec.n
    return 1  # dense and batch-matmul layers here are of one sample


def file_name(model, spec):
    prefix = "%s_b%d_" % (model, batch_of(spec))
    if isinstance(spec, Conv):
        return prefix + "conv%dx%d_c%d_k%d_h%d_s%d" % (spec.r, spec.s, spec.c, spec.k, spec.h, spec.stride)
    if isinstance(spec, Depthwise):
        return prefix + "dw%dx%d_c%d_h%d_s%d" % (spec.r, spec.s, spec.c, spec.h, spec.stride)
    if isinstance(spec, Dense):
        act = "" if spec.act == "none" else "_" + spec.act.split("_")[0]
        return prefix + "dense_m%d_n%d_k%d%s" % (spec.m, spec.n, spec.k, act)
    form = "nt" if spec.transposed else "nn"
    return prefix + "bmm_%s_b%d_m%d_n%d_k%d" % (form, spec.b, spec.m, spec.n, spec.k)


def op_class(spec):
    if isinstance(spec, Conv):
        return "conv2d"
    if isinstance(spec, Depthwise):
        return "depthwise_conv2d"
    if isinstance(spec, Dense):
        return "dense"
    return "batch_matmul_nt" if spec.transposed else "batch_matmul_nn"


def describe(spec):
    """One comment line: the op class and shape in words."""
    if isinstance(spec, (Conv, Depthwise)):
        oh, ow = conv_out(spec.h, spec.r, spec.stride, spec.pad), conv_out(spec.w, spec.s, spec.stride, spec.pad)
        channels = "%d -> %d channels" % (spec.c, spec.k) if isinstance(spec, Conv) else "%d channels" % spec.c
        return "%s: %dx%d, stride %d, padding %d, %s, %d x %d -> %d x %d, batch %d" % (
            op_class(spec), spec.r, spec.s, spec.stride, spec.pad, channels, spec.h, spec.w, oh, ow, spec.n)
    if isinstance(spec, Dense):
        act = {"none": "", "relu": " and ReLU", "gelu_erf": " and GELU (erf form)"}[spec.act]
        return "dense: %d x %d -> %d features, with bias%s" % (spec.m, spec.k, spec.n, act)
    rhs = "[%d, %d, %d]^T" % (spec.b, spec.n, spec.k) if spec.transposed else "[%d, %d, %d]" % (spec.b, spec.k, spec.n)
    return "%s: [%d, %d, %d] x %s -> [%d, %d, %d]" % (op_class(spec), spec.b, spec.m, spec.k, rhs, spec.b, spec.m, spec.n)


def index(axis, kernel_axis, stride_param, pad_param, stride):
    # A stride-1 index is written without `* 1`, which would stay in the IR.
    base = axis if stride == 1 else "%s * %s" % (axis, stride_param)
    return "%s + %s - %s" % (base, kernel_axis, pad_param)


def conv_body(spec):
    depthwise = isinstance(spec, Depthwise)
    params = "N = %d, C = %d, H = %d, W = %d, " % (spec.n, spec.c, spec.h, spec.w)
    if not depthwise:
        params += "K = %d, " % spec.k
    params += "R = %d, S = %d, SH = %d, SW = %d, PH = %d, PW = %d" % (spec.r, spec.s, spec.stride, spec.stride,
                                                                      spec.pad, spec.pad)
    weights = "[C, R, S]" if depthwise else "[K, C, R, S]"
    channel = "c" if depthwise else "k"
    lines = ["  X  = input f32[N, C, H, W]", "  Wt = input const f32%s" % weights]
    head = "  out[n, %s, h: (H + 2 * PH - R) / SH + 1, w: (W + 2 * PW - S) / SW + 1] = " % channel
    if not depthwise and spec.r == 1 and spec.s == 1 and spec.pad == 0:
        # A pointwise convolution: no kernel window and nothing to pad.
        hi = "h" if spec.stride == 1 else "h * SH"
        wi = "w" if spec.stride == 1 else "w * SW"
        lines.append(head + "sum(c: C)")
        lines.append("      X[n, c, %s, %s] * Wt[k, c, 0, 0]" % (hi, wi))
    else:
        hi = index("h", "r", "SH", "PH", spec.stride)
        wi = index("w", "s", "SW", "PW", spec.stride)
        lines.append(head + ("sum(r: R, s: S)" if depthwise else "sum(c: C, r: R, s: S)"))
        lines.append("      select(%s >= 0 && %s < H && %s >= 0 && %s < W," % (hi, hi, wi, wi))
        lines.append("             X[n, c, %s, %s], 0.0) * Wt[%s, r, s]" % (hi, wi, "c" if depthwise else "k, c"))
    return params, lines


def dense_body(spec):
    params = "M = %d, N = %d, K = %d" % (spec.m, spec.n, spec.k)
    y = "acc[i, j] + bias[j]"
    out = {
        "none": y,
        "relu": "max(%s, 0.0)" % y,
        "gelu_erf": "0.5 * (%s) * (1.0 + erf((%s) * %s))" % (y, y, GELU_ERF_SCALE),
    }[spec.act]
    return params, [
        "  A    = input f32[M, K]",
        "  W    = input const f32[N, K]",
        "  bias = input const f32[N]",
        "  acc[i, j] = sum(k: K) A[i, k] * W[j, k]",
        "  out[i, j] = " + out,
    ]


def batch_matmul_body(spec):
    params = "B = %d, M = %d, N = %d, K = %d" % (spec.b, spec.m, spec.n, spec.k)
    if spec.transposed:
        return params, ["  X = input f32[B, M, K]", "  Y = input f32[B, N, K]",
                        "  out[b, i, j] = sum(k: K) X[b, i, k] * Y[b, j, k]"]
    return params, ["  X = input f32[B, M, K]", "  Y = input f32[B, K, N]",
                    "  out[b, i, j] = sum(k: K) X[b, i, k] * Y[b, k, j]"]


def wrap_names(names, indent="#   ", width=100):
    lines, line = [], indent
    for i, name in enumerate(names):
        piece = name + (", " if i + 1 < len(names) else "")
        if len(line) + len(piece) > width and line != indent:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return lines


def workload_text(name, spec, uses):
    header = []
    for model in sorted({u.model for u in uses}, key=list(MODEL_TITLES).index):
        mine = [u.name for u in uses if u.model == model]
        header.append("# %s, batch %d: %d use%s" % (MODEL_TITLES[model], batch_of(spec), len(mine),
                                                    "" if len(mine) == 1 else "s"))
        header += wrap_names(mine)
    header.append("# Op class " + describe(spec) + ".")
    header.append("# Generated by scripts/make_layer_suite.py; conventions in configs/layers/README.md.")
    if isinstance(spec, (Conv, Depthwise)):
        params, body = conv_body(spec)
    elif isinstance(spec, Dense):
        params, body = dense_body(spec)
    else:
        params, body = batch_matmul_body(spec)
    return "\n".join(header + ["workload %s(%s) {" % (name, params)] + body + ["  output out", "}"]) + "\n"


def suite():
    """{file stem: (spec, [uses])} in the order of first use."""
    by_spec = collections.OrderedDict()
    for use in all_uses():
        by_spec.setdefault(use.spec, []).append(use)
    files = collections.OrderedDict()
    for spec, uses in by_spec.items():
        name = file_name(uses[0].model, spec)
        assert name not in files, "two layers named " + name
        files[name] = (spec, uses)
    return files


def manifest_text(files):
    lines = [
        "# The layer suite, one row per workload file (generated by scripts/make_layer_suite.py).",
        "# name: file stem and workload name; models: comma-separated model keys; op: conv2d,",
        "# depthwise_conv2d, dense, batch_matmul_nt or batch_matmul_nn; act: the dense layer's",
        "# activation (none, relu, gelu_erf; none for other ops); uses: how many layers of the",
        "# models it stands for; layers: model:module for each use, comma-separated.",
        "name\tmodels\top\tact\tuses\tlayers",
    ]
    for name, (spec, uses) in files.items():
        models = ",".join(sorted({u.model for u in uses}, key=list(MODEL_TITLES).index))
        act = spec.act if isinstance(spec, Dense) else "none"
        layers = ",".join("%s:%s" % (u.model, u.name) for u in uses)
        lines.append("\t".join([name, models, op_class(spec), act, str(len(uses)), layers]))
    return "\n".join(lines) + "\n"


def outputs():
    files = suite()
    out = collections.OrderedDict()
    for name, (spec, uses) in files.items():
        out[name + ".tf"] = workload_text(name, spec, uses)
    out["layers.tsv"] = manifest_text(files)
    return files, out


def summary(files):
    rows = collections.OrderedDict()
    for name, (spec, uses) in files.items():
        key = "%s batch %d" % (uses[0].model, batch_of(spec))
        distinct, count = rows.get(key, (0, 0))
        rows[key] = (distinct + 1, count + len(uses))
    return ["%-22s %3d distinct layers, %3d uses" % (k, d, c) for k, (d, c) in rows.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "layers")
    parser.add_argument("--out", default=default_out)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    files, out = outputs()
    if args.check:
        stale = []
        for name, text in out.items():
            path = os.path.join(args.out, name)
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name + " differs")
            except OSError:
                stale.append(name + " is missing")
        present = {f for f in os.listdir(args.out) if f.endswith(".tf")} if os.path.isdir(args.out) else set()
        stale += sorted(f + " is not generated" for f in present - set(out))
        for line in stale:
            print("%s: %s" % (args.out, line))
        if stale:
            print("run scripts/make_layer_suite.py to regenerate the layer suite")
            return 1
        print("%d files of the layer suite are current" % len(out))
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, text in out.items():
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(text)
    print("\n".join(summary(files)))
    print("wrote %d workload files and layers.tsv to %s" % (len(files), os.path.normpath(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
