"""torch's per-element MLP on the rows of bench_tensor_mlp: 4 nn.Linear layers W -> W with bias,
ReLU between them, over N = 2^20 elements (an (N, W) batch): float16 eager at widths 16 to 128
(256 with --wide), bfloat16 and float32 eager at width 64, and torch.compile in float16 at each
width ('n/a' where it fails). As in bench_tensor_mlp, K input sets whose bytes (x and y) exceed
200 MB in all are cycled through, each figure the median of 50 CUDA-event intervals after a
warm-up, against the memory floor (the bytes of x and y at the bandwidth of a 2 GiB
device-to-device copy of the same run) and a tensor-core peak. float32 runs as torch is set up
(torch.backends.cuda.matmul.allow_tf32, printed). Run on the GPU machine beside bench_tensor_mlp:
    python3 bench/tensor_mlp_torch.py [--json PATH] [--quick] [--wide] [--peak-tflops T]
"""
import argparse
import json
import math
import time

import torch

from torch_timing import median_ms  # bench/torch_timing.py, beside this script

LAYERS = 4
ROTATE_BYTES = 200e6


def make_mlp(width, dtype, dev):
    torch.manual_seed(1000 * width)  # nn.Linear's default initialization, the same on every run
    layers = []
    for l in range(LAYERS):
        layers.append(torch.nn.Linear(width, width, bias=True))
        if l + 1 < LAYERS:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).to(device=dev, dtype=dtype).eval()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--quick", action="store_true", help="N = 2^14, 5 runs, 2 sets (smoke test)")
    parser.add_argument("--wide", action="store_true", help="also width 256")
    parser.add_argument("--peak-tflops", type=float, default=989.0,
                        help="the tensor-core peak the TFLOP/s are compared with (H100 SXM dense float16)")
    opt = parser.parse_args()
    n = 1 << 14 if opt.quick else 1 << 20
    runs = 5 if opt.quick else 50

    dev = torch.device("cuda")
    size = (2 << 30) // 4
    a = torch.rand(size, device=dev)
    b = torch.empty_like(a)
    copy_ms = median_ms(lambda: b.copy_(a), runs)
    copy_gbs = 2 * (2 << 30) / (copy_ms * 1e6)  # read + write
    del a, b
    print(f"tensor_mlp_torch on {torch.cuda.get_device_name()}, torch {torch.__version__}; N = {n}, "
          f"median of {runs} runs; copy 2 GiB: {copy_gbs:.0f} GB/s; "
          f"allow_tf32 = {torch.backends.cuda.matmul.allow_tf32}")

    rows = []

    def measure(name, width, dtype, compiled=False):
        elem = torch.tensor([], dtype=dtype).element_size()
        launch_bytes = n * width * 2 * elem  # x read, y written
        sets = 2 if opt.quick else max(2, math.ceil(ROTATE_BYTES / launch_bytes))
        row = {"name": name, "width": width, "io": str(dtype).replace("torch.", ""),
               "operand": str(dtype).replace("torch.", ""), "compiled": compiled, "sets": sets,
               "ms": None, "floor_ratio": None, "elements_per_s": None, "tflops": None,
               "peak_fraction": None, "compile_ms": None, "ok": True, "reason": ""}
        with torch.inference_mode():
            model = make_mlp(width, dtype, dev)
            xs = [(torch.rand(n, width, device=dev) * 2 - 1).to(dtype) for _ in range(sets)]
            k = [0]

            def step():
                model(xs[k[0] % sets])
                k[0] += 1

            try:
                if compiled:
                    # The first call compiles (dynamic=False: one graph for this shape).
                    model = torch.compile(model, dynamic=False)
                    t0 = time.perf_counter()
                    model(xs[0])
                    torch.cuda.synchronize()
                    row["compile_ms"] = (time.perf_counter() - t0) * 1e3
                ms = median_ms(step, runs, warmup=max(3, sets))
            except Exception as e:  # noqa: BLE001: torch.compile's stack can fail in many ways
                if not compiled:
                    raise
                first = str(e).splitlines()[0] if str(e) else ""
                row.update(ok=False, reason=f"torch.compile failed: {type(e).__name__}: {first}")
            if row["ok"]:
                floor_ms = launch_bytes / (copy_gbs * 1e6)
                tflops = 2 * LAYERS * width * width * n / (ms * 1e-3) / 1e12
                row.update(ms=ms, floor_ratio=floor_ms / ms, elements_per_s=n / (ms * 1e-3), tflops=tflops,
                           peak_fraction=tflops / opt.peak_tflops)
            del xs, model
        torch.cuda.empty_cache()
        if row["ok"]:
            print(f"  torch {name}: {row['ms']:.4f} ms  {row['floor_ratio']:.3f} of floor  "
                  f"{row['tflops']:.1f} TFLOP/s ({row['peak_fraction']:.3f} of peak), {sets} sets"
                  + (f", compiled in {row['compile_ms']:.0f} ms" if row["compile_ms"] is not None else ""))
        else:
            print(f"  torch {name}: n/a ({row['reason']})")
        rows.append(row)

    widths = [16, 32, 64, 128] + ([256] if opt.wide else [])
    for w in widths:
        measure(f"mlp W={w} float16 eager", w, torch.float16)
    measure("mlp W=64 bfloat16 eager", 64, torch.bfloat16)
    measure("mlp W=64 float32 eager", 64, torch.float32)
    for w in widths:
        measure(f"mlp W={w} float16 torch.compile", w, torch.float16, compiled=True)

    def fmt(v, digits):
        return "n/a" if v is None else f"{v:.{digits}f}"

    print(f"\n{'kernel':<36} {'sets':>4} {'ms':>9} {'floor':>7} {'elements/s':>11} {'TFLOP/s':>8} {'of peak':>7}")
    for r in rows:
        eps = "n/a" if r["elements_per_s"] is None else f"{r['elements_per_s']:.3e}"
        print(f"{r['name']:<36} {r['sets']:>4} {fmt(r['ms'], 4):>9} {fmt(r['floor_ratio'], 3):>7} {eps:>11} "
              f"{fmt(r['tflops'], 1):>8} {fmt(r['peak_fraction'], 3):>7}")

    if opt.json:
        with open(opt.json, "w") as out:
            json.dump({"benchmark": "tensor_mlp_torch", "device": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "copy_gbs": copy_gbs, "n": n, "layers": LAYERS, "runs": runs,
                       "peak_tflops": opt.peak_tflops, "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                       "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
