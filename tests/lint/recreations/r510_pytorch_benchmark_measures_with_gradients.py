"""pytorch-benchmark's `benchmark(model, sample, num_runs)` warms the model
up and then measures its memory and inference timing by calling it on the
sample again and again, with gradients on: for any model whose parameters
require grad, every timed call builds an autograd graph and the allocated
memory it reports includes the tensors saved for a backward that never
comes.  The fix, "Fix: remove gradient tracking ... Added missing with
torch.no_grad" (merged).
Buggy line: `model(batch)` in `measure_allocated_memory` / `measure_detailed_inference_timing`.
Source: https://github.com/LukasHedegaard/pytorch-benchmark/pull/2"""
import time

import torch
import torch.nn as nn


def warm_up(model, batch, num_runs=3):
    for _ in range(num_runs):
        model(batch)


def measure_allocated_memory(model, batch, outputs):
    out = model(batch)  # expect: ADL031
    outputs.append(out)
    saved = 0
    fn = out.grad_fn
    seen = set()
    stack = [fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        saved += 1
        stack.extend(n for n, _ in node.next_functions)
    return saved


def measure_detailed_inference_timing(model, batch, num_runs=5):
    timings = []
    for _ in range(num_runs):
        start = time.perf_counter()
        model(batch)
        timings.append(time.perf_counter() - start)
    return sum(timings) / len(timings)


def benchmark(model, sample, num_runs=5, batch_size=2):
    results = {}
    model.eval()
    batch = torch.cat([sample] * batch_size)
    outputs = []
    warm_up(model, batch)
    results["graph_nodes_kept"] = measure_allocated_memory(model, batch, outputs)
    results["timing"] = measure_detailed_inference_timing(model, batch, num_runs)
    results["output_requires_grad"] = outputs[0].requires_grad
    return results


def bug_shows():
    """The measured inference builds a graph (the benchmarked memory includes autograd's)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    results = benchmark(model, torch.randn(1, 3, 8, 8))
    return results["output_requires_grad"] and results["graph_nodes_kept"] > 0
