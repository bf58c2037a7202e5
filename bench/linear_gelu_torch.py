"""torch's peer figures for issue 15's fused linear + bias + GELU (deliverable 4, not built yet in
loom): y = GELU(x W^T + b) with x (16384, 1024), W (4096, 1024), in float16 and bfloat16, and in
float32 with tf32 allowed. Per type: F.linear alone, F.linear then F.gelu (erf and tanh forms),
and torch.compile of the pair ('n/a' where it fails); each the median of 50 CUDA-event intervals
after a warm-up, in ms and TFLOP/s (2 M N K per call). Run on the GPU machine:
    python3 bench/linear_gelu_torch.py [--json PATH] [--m M] [--k K] [--n N]
"""
import argparse
import json

import torch
import torch.nn.functional as F

from torch_timing import median_ms  # bench/torch_timing.py, beside this script


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--m", type=int, default=16384)
    p.add_argument("--k", type=int, default=1024)
    p.add_argument("--n", type=int, default=4096)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True  # float32 rows: tf32 tensor cores, as loom's TF32
    dev = "cuda"
    flop = 2.0 * a.m * a.n * a.k
    print(f"linear + GELU on {torch.cuda.get_device_name()}, torch {torch.__version__}: "
          f"x ({a.m}, {a.k}) W ({a.n}, {a.k}), median of 50")
    rows = []
    for name, dt in (("float16", torch.float16), ("bfloat16", torch.bfloat16), ("float32/tf32", torch.float32)):
        g = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(a.m, a.k, device=dev, dtype=dt, generator=g)
        w = torch.randn(a.n, a.k, device=dev, dtype=dt, generator=g) * (1.0 / a.k ** 0.5)
        b = torch.randn(a.n, device=dev, dtype=dt, generator=g) * 0.1
        forms = {
            "linear": lambda: F.linear(x, w, b),
            "linear+gelu": lambda: F.gelu(F.linear(x, w, b)),
            "linear+gelu(tanh)": lambda: F.gelu(F.linear(x, w, b), approximate="tanh"),
        }
        try:
            fused = torch.compile(lambda: F.gelu(F.linear(x, w, b)))
            fused()
            forms["compile linear+gelu"] = fused
        except Exception as e:  # noqa: BLE001 - report, do not fail
            print(f"  {name}: torch.compile failed: {type(e).__name__}")
        for form, fn in forms.items():
            ms = median_ms(fn, warmup=5)
            rows.append({"type": name, "form": form, "ms": ms, "tflops": flop / ms / 1e9})
            print(f"  {name:13s} {form:20s} {ms:8.4f} ms  {flop / ms / 1e9:7.1f} TFLOP/s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "m": a.m, "k": a.k, "n": a.n, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
