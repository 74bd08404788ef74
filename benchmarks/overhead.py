"""Overhead of autograd-doctor against eager PyTorch and anomaly mode, measured in one run.

The workloads (benchmarks/models.py) are small training steps shaped like users' models.
For each one, every repetition enters each mode in turn (eager, default watch(), full
mode, anomaly mode; the order rotates between repetitions so that machine noise hits all
of them alike), times the first steps after entering, then the steady state. Ratios are
taken against eager within the same repetition; the table shows their median and, in
brackets, their min-max over the repetitions.

Wall time on a shared 2-core machine is noisy; `--callgrind` counts instructions instead
(valgrind's callgrind, one thread; needs gcc and valgrind's headers), which are stable to a
fraction of a percent.

Run:
    python benchmarks/overhead.py                # wall time, 1 thread and default threads
    python benchmarks/overhead.py --callgrind    # instruction counts (needs valgrind)
    python benchmarks/overhead.py --quick        # a fast smoke run
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import autograd_doctor  # noqa: E402
import autograd_doctor.doctor  # noqa: E402,F401  (imported now: the code measured is the code at start)
from models import WORKLOADS  # noqa: E402


class Eager:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def anomaly():
    return torch.autograd.detect_anomaly(check_nan=False)  # noqa: ADL013 (the baseline we compare against)


def full_mode():
    return autograd_doctor.watch(mode="full")


MODES = {
    "eager": Eager,
    "default": autograd_doctor.watch,
    "full": full_mode,
    "anomaly": anomaly,
}

FIRST_STEPS = 3  # "first steps": the steps right after entering the mode


def run_mode(step, factory, steady_steps: int, warmup: int) -> tuple[float, float]:
    """(seconds per step over the first steps, seconds per step in the steady state)."""
    with factory():
        start = time.perf_counter()
        for _ in range(FIRST_STEPS):
            step()
        first = (time.perf_counter() - start) / FIRST_STEPS
        for _ in range(warmup):
            step()
        start = time.perf_counter()
        for _ in range(steady_steps):
            step()
        steady = (time.perf_counter() - start) / steady_steps
    return first, steady


def measure_wall(setup, repeats: int, steady_steps: int, warmup: int) -> dict:
    step = setup()
    for _ in range(3):  # torch's own first-call costs, paid before any mode is timed
        step()
    names = list(MODES)
    times = {name: {"first": [], "steady": []} for name in names}
    for repeat in range(repeats):
        order = names[repeat % len(names):] + names[:repeat % len(names)]
        for name in order:
            first, steady = run_mode(step, MODES[name], steady_steps, warmup)
            times[name]["first"].append(first)
            times[name]["steady"].append(steady)
    return summarize(times, repeats)


def summarize(times: dict, repeats: int) -> dict:
    result = {}
    for name, phases in times.items():
        result[name] = {}
        for phase, values in phases.items():
            ratios = [values[i] / times["eager"][phase][i] for i in range(repeats)]
            result[name][phase] = {
                "ms": statistics.median(values) * 1e3,
                "ratio": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
            }
    return result


def peak_memory(setup, factory, steps: int = 3) -> int:
    """Peak bytes of CPU tensors and Python objects during a few steps, after one step."""
    import torch.profiler as profiler

    step = setup()
    with factory():
        step()
        gc.collect()
        tracemalloc.start()
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
            for _ in range(steps):
                step()
        _, python_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    events = sorted(((e.time_range.start, e.cpu_memory_usage) for e in prof.events() if e.cpu_memory_usage),
                    key=lambda t: t[0])
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak + python_peak


# ---- instruction counts ------------------------------------------------------------

# Client requests to callgrind, compiled on demand: before a measured region, turn
# instrumentation on and reset the counters; after it, dump them (labelled) and turn
# instrumentation off. The worker runs with --instr-atstart=no, so importing torch and
# building the models run uninstrumented (several times faster on a loaded machine); the
# counts of a region are the same either way. Needs gcc and valgrind's headers.
_MARKER_SOURCE = """
#include <valgrind/callgrind.h>
void mark_zero(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void mark_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); CALLGRIND_STOP_INSTRUMENTATION; }
"""


def build_marker_library(folder: str) -> str:
    source = os.path.join(folder, "marker.c")
    library = os.path.join(folder, "marker.so")
    with open(source, "w") as stream:
        stream.write(_MARKER_SOURCE)
    done = subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", library, source], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"--callgrind needs gcc and valgrind's headers (valgrind/callgrind.h):\n{done.stderr}")
    return library


def callgrind_worker(names: list[str], steady_steps: int, library_path: str, modes: list[str]) -> None:
    """Runs under valgrind: one labelled dump per (workload, mode, phase)."""
    marker = ctypes.CDLL(library_path)
    zero, dump = marker.mark_zero, marker.mark_dump
    dump.argtypes = [ctypes.c_char_p]
    torch.set_num_threads(1)

    def measured(label: str, function) -> None:
        # A garbage collection of the whole heap landing in one region would swamp it.
        gc.collect()
        gc.disable()
        zero()
        function()
        dump(label.encode())
        gc.enable()

    for index, name in enumerate(names):
        step = WORKLOADS[name]()
        for _ in range(3):
            step()
        # The process's first measured region carries a one-time cost of the measuring
        # itself (tens of millions of instructions): spend it on a region nobody reads.
        measured("warmup", step)
        for mode in modes:
            with MODES[mode]():
                measured(f"{index}|{mode}|first|{FIRST_STEPS}", lambda: [step() for _ in range(FIRST_STEPS)])
                step()
                measured(f"{index}|{mode}|steady|{steady_steps}", lambda: [step() for _ in range(steady_steps)])


_DUMP_LABEL = "desc: Trigger: Client Request: "


def measure_instructions(names: list[str], steady_steps: int, modes: list[str]) -> dict:
    counts: dict = {}
    wanted = modes
    with tempfile.TemporaryDirectory() as folder:
        library = build_marker_library(folder)
        out = os.path.join(folder, "callgrind.out")
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
            sys.executable, os.path.abspath(__file__), "--callgrind-worker", library,
            "--steps", str(steady_steps), "--only-names", json.dumps(names), "--modes", ",".join(modes),
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"callgrind run failed:\n{done.stderr[-3000:]}")
        for dump in os.listdir(folder):
            if not dump.startswith("callgrind.out."):
                continue
            label = total = None
            with open(os.path.join(folder, dump)) as stream:
                for line in stream:
                    if line.startswith(_DUMP_LABEL):
                        label = line[len(_DUMP_LABEL):].strip()
                    elif line.startswith("totals:"):
                        total = int(line.split()[1])
                        break
            if label is None or total is None or label == "warmup":
                continue
            index, mode, phase, steps = label.split("|")
            counts.setdefault(names[int(index)], {}).setdefault(mode, {})[phase] = total / int(steps)
    result = {}
    for name in names:
        modes = counts.get(name)
        if not modes or any(len(modes.get(mode, {})) != 2 for mode in wanted):
            sys.exit(f"callgrind: measurements missing for {name}")
        result[name] = {mode: {phase: {"instructions": value, "ratio": value / modes["eager"][phase]}
                               for phase, value in phases.items()} for mode, phases in modes.items()}
    return result


# ---- output ------------------------------------------------------------------------

def print_wall_table(title: str, results: dict) -> None:
    print(title)
    header = f"{'workload':46} {'phase':7} {'eager ms':>9}" + "".join(f" {m:>20}" for m in MODES if m != "eager")
    print(header)
    print("-" * len(header))
    for name, result in results.items():
        for phase in ("first", "steady"):
            cells = "".join(
                f" {result[m][phase]['ratio']:6.2f}x [{result[m][phase]['min']:.2f}-{result[m][phase]['max']:.2f}]"
                for m in MODES if m != "eager")
            print(f"{name if phase == 'first' else '':46} {phase:7} {result['eager'][phase]['ms']:9.2f}{cells}")
    print()


def print_instruction_table(results: dict) -> None:
    """The README's layout: one row per workload, each mode's first and steady ratio."""
    others = [mode for mode in MODES if mode != "eager" and mode in next(iter(results.values()))]
    print(f"instructions per training step (valgrind's callgrind, 1 thread, torch {torch.__version__}, "
          f"python {sys.version.split()[0]}),")
    print(f"ratio to eager PyTorch's step in the same process; first = the {FIRST_STEPS} steps right after "
          "entering the mode; eager Minstr = eager's steady step")
    print()
    print(f"{'workload':46} {'eager Minstr':>12}  " + "".join(f"{mode:<17}" for mode in others).rstrip())
    print(f"{'':46} {'':12}  " + "".join(f"{'first':>6}  {'steady':<9}" for _ in others).rstrip())
    print("-" * (61 + 17 * len(others)))
    for name, result in results.items():
        cells = "".join(f"{result[mode]['first']['ratio']:5.2f}x  {result[mode]['steady']['ratio']:6.3f}x  "
                        for mode in others)
        print(f"{name:46} {result['eager']['steady']['instructions'] / 1e6:12.1f}  {cells}".rstrip())
    print()


def _modes(options) -> list[str]:
    asked = [mode.strip() for mode in options.modes.split(",") if mode.strip()]
    unknown = [mode for mode in asked if mode not in MODES]
    if unknown:
        sys.exit(f"--modes: unknown {', '.join(unknown)} (known: {', '.join(MODES)})")
    return [mode for mode in MODES if mode == "eager" or mode in asked]


def main() -> int:
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="interleaved repetitions (wall time)")
    parser.add_argument("--steps", type=int, default=20, help="steady-state steps per measurement")
    parser.add_argument("--only", help="run only workloads whose name contains this text")
    parser.add_argument("--threads", choices=("1", "default", "both"), default="both")
    parser.add_argument("--callgrind", action="store_true", help="count instructions with valgrind instead of timing")
    parser.add_argument("--memory", action="store_true", help="also measure peak memory (default and full vs eager)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 repeats, 3 steps, 1 thread")
    parser.add_argument("--json", help="also write the results as JSON here")
    parser.add_argument("--modes", default=",".join(MODES),
                        help="--callgrind: the modes to count, comma-separated (eager is always counted; "
                             "leaving out anomaly halves the run)")
    parser.add_argument("--callgrind-worker", help=argparse.SUPPRESS)
    parser.add_argument("--only-names", help=argparse.SUPPRESS)
    options = parser.parse_args()

    if options.callgrind_worker:
        callgrind_worker(json.loads(options.only_names), options.steps, options.callgrind_worker, _modes(options))
        return 0
    names = [name for name in WORKLOADS if not options.only or options.only in name]
    if not names:
        print(f"overhead.py: no workload's name contains {options.only!r} (the names: "
              f"{', '.join(WORKLOADS)})", file=sys.stderr)
        return 2
    if options.quick:
        options.repeats, options.steps, options.threads = 2, 3, "1"
    results: dict = {}
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} cpus; "
          f"first = the {FIRST_STEPS} steps right after entering the mode, steady = {options.steps} steps later")
    print()
    if options.callgrind:
        results["instructions"] = measure_instructions(names, options.steps, _modes(options))
        print_instruction_table(results["instructions"])
    else:
        default_threads = torch.get_num_threads()
        settings = {"1": [1], "default": [default_threads], "both": [1, default_threads]}[options.threads]
        for threads in dict.fromkeys(settings):
            torch.set_num_threads(threads)
            table = {name: measure_wall(WORKLOADS[name], options.repeats, options.steps, warmup=2 * FIRST_STEPS)
                     for name in names}
            results[f"wall, {threads} thread(s)"] = table
            print_wall_table(f"wall time, {threads} thread(s), {options.repeats} interleaved repeats: "
                             "median ratio to eager [min-max]", table)
        torch.set_num_threads(default_threads)
    if options.quick:
        print("--quick is a smoke run: it checks that every workload runs in every mode. Its ratios are not "
              "measurements: 2 repeats of 3 steps, where the first repeat carries one-time costs (the first "
              "mode entered sorts your files from torch's, the interpreter re-specializes) and the median of "
              "2 is their mean. The figures in the README are instruction counts (--callgrind).")
    if options.memory:
        print("peak memory, ratio to eager")
        for name in names:
            eager = peak_memory(WORKLOADS[name], Eager)
            ratios = {mode: peak_memory(WORKLOADS[name], MODES[mode]) / eager for mode in ("default", "full")}
            results.setdefault("memory", {})[name] = ratios
            print(f"  {name:46} default {ratios['default']:.2f}x  full {ratios['full']:.2f}x")
    if options.json:
        with open(options.json, "w") as stream:
            json.dump(results, stream, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
