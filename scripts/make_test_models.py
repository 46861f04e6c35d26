#!/usr/bin/env python3
"""Writes the ONNX models that tunefarm's ONNX importer is tested with, without downloading any.

OUTDIR gets resnet50.onnx, mobilenet_v2.onnx and bert_layer.onnx (the graphs PyTorch
exports for torchvision's ResNet-50 v1.5 and MobileNet-V2 with BatchNorm folded, and for
one BERT-base encoder layer, with random weights); small_cnn.onnx and small_transformer.onnx
with their inputs and float64-computed outputs as <model>.<tensor>.pb TensorProto files
(the whole-graph reference check), as are small_detector.onnx, small_embedder.onnx and small_legacy.onnx
(the data-moving operators, in their opset 9 forms too, and the shape arithmetic of exported graphs) and
small_masked_attention.onnx (Range, Where, comparisons and logic of attention masks); malformed/ with
the models the importer must reject and
manifest.tsv saying what each error must name; and models.tsv with each good model's
inputs, outputs and node counts. Deterministic: the same files on every run (fixed seeds).
Needs only Python 3, onnx (1.12 or newer) and numpy; the build runs it (tests/CMakeLists.txt).

Usage: scripts/make_test_models.py OUTDIR | --self-test
"""
import argparse
import collections
import os
import sys
import time

sys.dont_write_bytecode = True  # the testmodels package sits in the source tree

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from testmodels import builder, data_ops, malformed, mask_ops, numpy_eval, self_test, transformer, vision  # noqa: E402

# (name, build, inputs for the reference outputs or None)
GOOD_MODELS = [
    ("resnet50", vision.resnet50, None),
    ("mobilenet_v2", vision.mobilenet_v2, None),
    ("bert_layer", transformer.bert_layer, None),
    ("small_cnn", vision.small_cnn, vision.small_cnn_inputs),
    ("small_transformer", transformer.small_transformer, transformer.small_transformer_inputs),
    ("small_detector", data_ops.small_detector, data_ops.small_detector_inputs),
    ("small_embedder", data_ops.small_embedder, data_ops.small_embedder_inputs),
    ("small_legacy", data_ops.small_legacy, data_ops.small_legacy_inputs),
    ("small_masked_attention", mask_ops.small_masked_attention, mask_ops.small_masked_attention_inputs),
]


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def mib(size):
    return "%.1f MiB" % (size / 2.0 ** 20) if size >= 2 ** 20 else "%d bytes" % size


def check(name, model):
    """onnx.checker with full_check (which runs strict shape inference); exits on a rejection."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # ValidationError, InferenceError, ...: all mean a broken generator
        sys.exit("make_test_models: onnx.checker rejects %s: %s" % (name, e))


def write_good_model(outdir, name, build, make_inputs):
    """Writes <name>.onnx (and its reference tensors); returns its models.tsv row."""
    model = build()
    check(name + ".onnx", model)
    data = model.SerializeToString()
    write_file(os.path.join(outdir, name + ".onnx"), data)
    ops = collections.Counter(node.op_type for node in model.graph.node)
    inputs = ";".join(builder.describe_value(v) for v in model.graph.input)
    outputs = ";".join(builder.describe_value(v) for v in model.graph.output)
    print("%s.onnx: %d nodes, %s parameters, %s; %s -> %s" % (
        name, len(model.graph.node), format(builder.parameter_count(model), ","), mib(len(data)), inputs, outputs))
    if make_inputs is not None:
        feeds = make_inputs()
        results = numpy_eval.run_graph(model, feeds)
        for tensor_name, array in list(feeds.items()) + list(results.items()):
            array = np.asarray(array)
            array = array if array.dtype.kind in "iu" else array.astype(np.float32)  # token ids stay int64
            tensor = numpy_helper.from_array(array, tensor_name)
            file_name = "%s.%s.pb" % (name, tensor_name)
            write_file(os.path.join(outdir, file_name), tensor.SerializeToString())
            role = "input" if tensor_name in feeds else "expected output"
            print("%s: %s %s, %s%s" % (file_name, role, tensor_name, array.dtype, list(array.shape)))
    op_counts = ",".join("%s=%d" % (op, n) for op, n in sorted(ops.items()))
    return [name + ".onnx", inputs, outputs, str(len(model.graph.node)), op_counts]


def write_malformed(outdir):
    folder = os.path.join(outdir, "malformed")
    os.makedirs(folder, exist_ok=True)
    for stale in os.listdir(folder):  # a case renamed or dropped leaves no file behind
        os.remove(os.path.join(folder, stale))
    rows = [["file", "must_contain", "why"]]
    for case in malformed.CASES:
        data = malformed.build_broken(case)
        write_file(os.path.join(folder, case.file), data)
        rows.append([case.file, case.must_contain, case.why])
        print("malformed/%s: %s; the error must name %s" % (case.file, case.why, case.must_contain))
    write_tsv(os.path.join(folder, "manifest.tsv"), rows)
    print("malformed/manifest.tsv: %d cases" % len(malformed.CASES))


def write_tsv(path, rows):
    for row in rows:
        assert all("\t" not in cell and "\n" not in cell for cell in row), row
    write_file(path, "".join("\t".join(row) + "\n" for row in rows).encode())


def generate(outdir):
    start = time.monotonic()
    os.makedirs(outdir, exist_ok=True)
    index = os.path.join(outdir, "models.tsv")
    if os.path.exists(index):  # the build's stamp: rewritten only once every file is
        os.remove(index)
    rows = [["file", "inputs", "outputs", "nodes", "ops"]]
    for name, build, make_inputs in GOOD_MODELS:
        rows.append(write_good_model(outdir, name, build, make_inputs))
    write_malformed(outdir)
    write_tsv(index, rows)
    print("models.tsv: %d models" % (len(rows) - 1))
    print("make_test_models: wrote %s in %.1f s" % (outdir, time.monotonic() - start))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", nargs="?", help="where to write the models")
    parser.add_argument("--self-test", action="store_true",
                        help="check the numpy evaluator and the models; write nothing")
    args = parser.parse_args()
    if args.self_test == (args.outdir is not None):
        parser.error("give either OUTDIR or --self-test")
    if args.self_test:
        start = time.monotonic()
        count, failures = self_test.run()
        for failure in failures:
            print("FAILED: " + failure)
        print("make_test_models --self-test: %d passed, %d failed (%.1f s)" % (
            count - len(failures), len(failures), time.monotonic() - start))
        return 1 if failures else 0
    generate(args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
