"""Overhead of autograd-doctor against eager PyTorch and anomaly mode, measured in one run.

Repetitions of the modes are interleaved (eager, watch, anomaly, eager, ...) so that
machine noise hits all of them alike; the table shows medians and ratios to eager.
Run: python benchmarks/overhead.py [--repeats N] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc

import warnings

import torch
from torch import nn

import autograd_doctor


def tiny_mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    return model, optimizer, x, y, nn.functional.cross_entropy


def wide_mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 1024), torch.randint(0, 10, (256,))
    return model, optimizer, x, y, nn.functional.cross_entropy


def transformer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.1, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    head = nn.Linear(128, 10)
    model = nn.Sequential(encoder, head)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 32, 128), torch.randint(0, 10, (16, 32))

    def loss_fn(out, target):
        return nn.functional.cross_entropy(out.reshape(-1, 10), target.reshape(-1))

    return model, optimizer, x, y, loss_fn


WORKLOADS = {
    "tiny MLP (width 64, batch 32, 1 thread)": (tiny_mlp, 1, 200),
    "wide MLP (width 1024, batch 256)": (wide_mlp, None, 20),
    "TransformerEncoder (2 layers, d=128)": (transformer, None, 20),
}


def make_step(setup):
    model, optimizer, x, y, loss_fn = setup()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return step


class Eager:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def anomaly():
    return torch.autograd.detect_anomaly(check_nan=False)  # noqa: ADL013 (the baseline we compare against)


def watch_verify_saved():
    return autograd_doctor.watch(verify_saved=True)


MODES = {
    "eager": Eager,
    "watch()": autograd_doctor.watch,
    "verify_saved": watch_verify_saved,
    "anomaly": anomaly,
}


WARMUP_STEPS = 5


def time_mode(step, mode_factory, steps: int) -> float:
    with mode_factory():
        # Warm-up inside the mode: the doctor examines the first few backward() calls
        # for cut gradient paths, a one-time cost that a long run does not see again.
        for _ in range(WARMUP_STEPS):
            step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        return (time.perf_counter() - start) / steps


def peak_memory(setup, mode_factory, steps: int = 3) -> int:
    """Peak bytes allocated by CPU tensors and Python objects during a few training steps.

    The mode is entered and one step run before measuring, so one-time set-up (the
    doctor's wrappers, anomaly mode's state) is not counted as per-step memory.
    """
    import torch.profiler as profiler

    step = make_step(setup)
    with mode_factory():
        step()
        gc.collect()
        tracemalloc.start()
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
            for _ in range(steps):
                step()
        _, python_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # Peak of live tensor memory, replayed from the profiler's allocation events.
    events = sorted(((e.time_range.start, e.cpu_memory_usage) for e in prof.events() if e.cpu_memory_usage), key=lambda t: t[0])
    live, peak = 0, 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak + python_peak


def main() -> int:
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the results as JSON here")
    parser.add_argument("--only", help="run only workloads whose name contains this text")
    options = parser.parse_args()

    results = {}
    default_threads = torch.get_num_threads()
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, {options.repeats} interleaved repeats, medians")
    print()
    header = (f"{'workload':42} {'eager ms':>9} {'watch()':>9} {'watch(verify_saved=True)':>25} "
              f"{'anomaly':>9} {'peak mem watch/eager':>21}")
    print(header)
    print("-" * len(header))
    for name, (setup, threads, steps) in WORKLOADS.items():
        if options.only and options.only not in name:
            continue
        torch.set_num_threads(threads or default_threads)
        step = make_step(setup)
        samples = {mode: [] for mode in MODES}
        for _ in range(options.repeats):
            for mode, factory in MODES.items():
                samples[mode].append(time_mode(step, factory, steps))
        medians = {mode: statistics.median(values) for mode, values in samples.items()}
        eager_peak = peak_memory(setup, Eager)
        watch_peak = peak_memory(setup, autograd_doctor.watch)
        ratios = {mode: medians[mode] / medians["eager"] for mode in MODES}
        memory_ratio = watch_peak / eager_peak if eager_peak else float("nan")
        print(f"{name:42} {medians['eager'] * 1e3:9.3f} {ratios['watch()']:8.2f}x {ratios['verify_saved']:24.2f}x "
              f"{ratios['anomaly']:8.2f}x {memory_ratio:20.2f}x")
        results[name] = {"eager_seconds": medians["eager"], "ratios": ratios, "peak_memory_ratio": memory_ratio}
    torch.set_num_threads(default_threads)
    if options.json:
        with open(options.json, "w") as stream:
            json.dump(results, stream, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
