#!/usr/bin/env python3
"""The vendor libraries' speed on the suite's GPU workloads, for comparison
with tunefarm's tuned CUDA kernels (scripts/gpu-check.sh).

  torch_baselines.py OUT.tsv WORKLOAD.tf[:K=V,K=V] ...

For each workload file (its shape parameters, optionally overridden), times
the operation through PyTorch -- cuBLAS for matrix products with TF32 off,
cuDNN for convolutions -- the way tunefarm's CUDA runner times its kernels:
a warm-up, then groups of back-to-back runs of at least 20 ms each, timed
with CUDA events, the median of the groups' per-run times. Inputs are random
(never zeros). Writes one row per workload: name, kind, shape, seconds,
GFLOP/s (2 flops per multiply-add, as tunefarm counts them).
"""
import re
import statistics
import sys

import torch
import torch.nn.functional as F


def parse_workload(spec):
    path, _, overrides = spec.partition(":")
    text = open(path).read()
    m = re.search(r"workload\s+(\w+)\s*\(([^)]*)\)", text)
    if not m:
        sys.exit(f"{path}: no 'workload name(...)' header")
    name = m.group(1)
    params = {k.strip(): int(v) for k, v in (p.split("=") for p in m.group(2).split(",") if p.strip())}
    for kv in filter(None, overrides.split(",")):
        k, v = kv.split("=")
        params[k] = int(v)
    return name, params


def make_op(name, p):
    dev = "cuda"
    rnd = lambda *shape: torch.randn(*shape, device=dev, dtype=torch.float32)
    if name.startswith("gmm"):
        a, b = rnd(p["M"], p["K"]), rnd(p["K"], p["N"])
        return "matmul (cuBLAS)", 2 * p["M"] * p["N"] * p["K"], lambda: torch.matmul(a, b)
    if name.startswith("dense"):
        a, w, bias = rnd(p["M"], p["K"]), rnd(p["N"], p["K"]), rnd(p["N"])
        return "linear+relu (cuBLAS)", 2 * p["M"] * p["N"] * p["K"], lambda: F.relu(F.linear(a, w, bias))
    # Row reductions, counted as tunefarm's Workload::Flops counts them (one
    # per arithmetic operation, call and reduction step): softmax 5 per
    # element; layer norm 7 per element and 4 per row.
    if name.startswith("softmax"):
        x = rnd(p["M"], p["N"])
        return "softmax", 5 * p["M"] * p["N"], lambda: torch.softmax(x, dim=-1)
    if name.startswith("layer_norm"):
        x, g, b = rnd(p["M"], p["N"]), rnd(p["N"]), rnd(p["N"])
        flops = 7 * p["M"] * p["N"] + 4 * p["M"]
        return "layer_norm", flops, lambda: F.layer_norm(x, (p["N"],), g, b, eps=1e-5)
    oh = p["H"] + 2 * p["P"] - p["R"] + 1
    ow = p["W"] + 2 * p["P"] - p["S"] + 1
    if name.startswith("c2d"):
        x, w = rnd(p["N"], p["C"], p["H"], p["W"]), rnd(p["K"], p["C"], p["R"], p["S"])
        flops = 2 * p["N"] * p["K"] * oh * ow * p["C"] * p["R"] * p["S"]
        return "conv2d (cuDNN)", flops, lambda: F.conv2d(x, w, padding=p["P"])
    if name.startswith("dep"):
        x, w = rnd(p["N"], p["C"], p["H"], p["W"]), rnd(p["C"], 1, p["R"], p["S"])
        flops = 2 * p["N"] * p["C"] * oh * ow * p["R"] * p["S"]
        return "depthwise conv2d (cuDNN)", flops, lambda: F.conv2d(x, w, padding=p["P"], groups=p["C"])
    sys.exit(f"{name}: no vendor baseline for this workload")


def time_op(fn, min_group_s=0.02, groups=10):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end) / 1e3, 1e-6)
    number = max(1, int(min_group_s / once))
    per_run = []
    for _ in range(groups):
        start.record()
        for _ in range(number):
            fn()
        end.record()
        end.synchronize()
        per_run.append(start.elapsed_time(end) / 1e3 / number)
    return statistics.median(per_run)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    rows = []
    for spec in sys.argv[2:]:
        name, p = parse_workload(spec)
        kind, flops, fn = make_op(name, p)
        seconds = time_op(fn)
        shape = ",".join(f"{k}={v}" for k, v in p.items())
        rows.append((spec.split("/")[-1], kind, shape, seconds, flops / seconds / 1e9))
        print(f"{rows[-1][0]:40s} {kind:26s} {seconds * 1e6:10.1f} us {rows[-1][4]:10.1f} GFLOP/s", flush=True)
    with open(sys.argv[1], "w") as out:
        out.write("workload\tkind\tshape\tseconds\tgflops\n")
        for r in rows:
            out.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]:.9g}\t{r[4]:.2f}\n")


if __name__ == "__main__":
    main()
