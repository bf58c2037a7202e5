"""torch's LayerNorm, RMSNorm and softmax (float32) on the shapes of bench_rows, against a 2 GiB
device-to-device copy of the same run: the peer figures of issue 14. Each is checked against a
float64 computation on sampled rows, then timed as the median of 50 CUDA-event intervals after a
warm-up. Run on the GPU machine beside bench_rows (tools/gpu-check):
    python3 bench/rows_torch.py
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
    print(f"rows_torch on {torch.cuda.get_device_name()}, torch {torch.__version__}; copy 2 GiB: {copy_gbs:.0f} GB/s")
    del a, b
    x = torch.rand(8192, 8192, device=dev) * 6 - 3
    bias = torch.rand(8192, device=dev) * 6 - 3
    for name, fn in (("GELU", lambda: F.gelu(x, approximate="tanh")),
                     ("bias + GELU", lambda: F.gelu(x + bias, approximate="tanh"))):
        ms = median_ms(fn)
        print(f"  torch {name} f32 8192x8192: {ms:.4f} ms  {2 * 8192 * 8192 * 4 / (ms * 1e6) / copy_gbs:.3f} of copy")
    del x, bias
    # The sum of 2^28 floats, bytes read over the time against copy's bytes over its time (a read
    # alone may pass 1); CuPy's sum beside torch's when it is installed.
    x = torch.rand(1 << 28, device=dev) * 2 - 1
    ms = median_ms(lambda: x.sum())
    print(f"  torch sum of 2^28 floats: {ms:.4f} ms  {(1 << 28) * 4 / (ms * 1e6) / copy_gbs:.3f} of copy's bytes per second")
    try:
        import cupy
        xc = cupy.asarray(x)
        ms = median_ms(lambda: xc.sum())
        print(f"  cupy sum of 2^28 floats: {ms:.4f} ms  {(1 << 28) * 4 / (ms * 1e6) / copy_gbs:.3f} of copy's bytes per second")
        del xc
    except ImportError:
        print("  cupy: not installed")
    del x
    # Then softmax over rows too long to stay on chip (128 KiB and 512 KiB), against loom's
    # online softmax.
    shapes = [(65536, 768), (8192, 4096), (262144, 128), (128, 768), (140, 4096), (2048, 32768), (512, 131072)]
    gen = torch.Generator(device=dev).manual_seed(5)
    for rows, width in shapes:
        x = torch.rand(rows, width, device=dev, generator=gen) * 4 - 2
        w = torch.rand(width, device=dev, generator=gen) * 4 - 2
        bias = torch.rand(width, device=dev, generator=gen) * 4 - 2
        xd, wd, bd = x.double(), w.double(), bias.double()
        ops = {
            "LayerNorm": (lambda: F.layer_norm(x, (width,), w, bias, 1e-5),
                          lambda: F.layer_norm(xd, (width,), wd, bd, 1e-5)),
            "RMSNorm": (lambda: F.rms_norm(x, (width,), w, 1e-5), lambda: F.rms_norm(xd, (width,), wd, 1e-5)),
            "softmax": (lambda: torch.softmax(x, -1), lambda: torch.softmax(xd, -1)),
        }
        for name, (fn, ref) in ops.items():
            if rows < 1000 and width <= 8192 and name != "LayerNorm":
                continue  # the small shapes, where the launch dominates: LayerNorm only
            if width > 8192 and name != "softmax":
                continue
            err = (fn().double() - ref()).abs().max().item()
            ms = median_ms(fn)
            ratio = 2 * rows * width * 4 / (ms * 1e6) / copy_gbs
            print(f"  torch {name} f32 {rows}x{width}: {ms:.4f} ms  {ratio:.3f} of copy  max err {err:.1e}")
            if name != "LayerNorm" or rows < 1000:
                continue  # torch.compile takes tens of seconds per kernel: LayerNorm only
            compiled = torch.compile(fn)
            try:
                compiled()
                cms = median_ms(compiled)
                print(f"  torch.compile {name} f32 {rows}x{width}: {cms:.4f} ms  "
                      f"{2 * rows * width * 4 / (cms * 1e6) / copy_gbs:.3f} of copy")
            except Exception as e:  # torch.compile needs a working compiler toolchain
                print(f"  torch.compile {name}: not available ({type(e).__name__})")


if __name__ == "__main__":
    main()
