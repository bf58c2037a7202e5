"""torch's float16 / bfloat16 copy, y = a x + y, GELU and LayerNorm on the shapes of bench_half,
against a 2 GiB device-to-device copy of the same run: the peer figures for loom's 16-bit fields.
Each is timed as the median of 50 CUDA-event intervals after a warm-up. Run on the GPU machine
beside bench_half:
    python3 bench/half_torch.py
"""
import torch
import torch.nn.functional as F

from torch_timing import median_ms  # bench/torch_timing.py, beside this script


def main():
    dev = torch.device("cuda")
    n = (2 << 30) // 4
    a = torch.rand(n, device=dev)
    b = torch.empty_like(a)
    copy_ms = median_ms(lambda: b.copy_(a))
    copy_gbs = 2 * (2 << 30) / (copy_ms * 1e6)
    print(f"half_torch on {torch.cuda.get_device_name()}, torch {torch.__version__}; copy 2 GiB: {copy_gbs:.0f} GB/s")
    del a, b

    def report(name, ms, moved):
        print(f"  torch {name}: {ms:.4f} ms  {moved / (ms * 1e6) / copy_gbs:.3f} of copy")

    for dtype, tname in ((torch.float32, "float32"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        size = 2 if dtype != torch.float32 else 4
        x = (torch.rand(16384, 16384, device=dev) * 4 - 2).to(dtype)
        y = (torch.rand(16384, 16384, device=dev) * 4 - 2).to(dtype)
        if dtype != torch.bfloat16:
            report(f"copy {tname} 16384x16384", median_ms(lambda: y.copy_(x)), 2 * x.numel() * size)
        report(f"y = a x + y {tname} 16384x16384", median_ms(lambda: y.add_(x, alpha=0.7)), 3 * x.numel() * size)
        del x, y
        if dtype == torch.bfloat16:
            continue
        x = (torch.rand(8192, 8192, device=dev) * 6 - 3).to(dtype)
        report(f"GELU {tname} 8192x8192", median_ms(lambda: F.gelu(x, approximate="tanh")), 2 * x.numel() * size)
        del x
    for dtype, tname in ((torch.float32, "float32"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        size = 2 if dtype != torch.float32 else 4
        for rows, width in ((65536, 768), (8192, 4096)):
            if dtype != torch.float16 and width != 768:
                continue
            x = (torch.rand(rows, width, device=dev) * 4 - 2).to(dtype)
            w = torch.rand(width, device=dev, dtype=dtype)
            bias = torch.rand(width, device=dev, dtype=dtype)
            report(f"LayerNorm {tname} {rows}x{width}",
                   median_ms(lambda: F.layer_norm(x, (width,), w, bias, 1e-5)), 2 * x.numel() * size)
            del x


if __name__ == "__main__":
    main()
