"""Timing shared by the torch peer scripts (bench/*_torch.py): the median of `runs` CUDA-event
intervals between back-to-back calls of `fn`, after `warmup` calls, in ms."""
import torch


def median_ms(fn, runs=50, warmup=3):
    for _ in range(warmup):
        fn()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(runs + 1)]
    events[0].record()
    for i in range(runs):
        fn()
        events[i + 1].record()
    torch.cuda.synchronize()
    times = sorted(events[i].elapsed_time(events[i + 1]) for i in range(runs))
    return times[runs // 2]
