"""The doctor's own Python calls per steady training step, in the default mode.

Wall time on a shared machine moves with the load, and instruction counts under valgrind take
minutes; the number of Python calls the doctor makes per step does not move between runs, and it
shows which of the doctor's functions a step pays for.  Runs one workload of `models.py` (three
eager steps, then eight steps under `autograd_doctor.watch()`, then the measured steps) under
cProfile and prints the calls per step into autograd_doctor's modules, most called first.

    python benchmarks/step_calls.py LSTM [--steps 10] [--top 40]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import autograd_doctor  # noqa: E402
from models import WORKLOADS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a part of a workload's name in benchmarks/models.py (LSTM, GPT, ResNet, ...)")
    parser.add_argument("--steps", type=int, default=10, help="steady steps profiled")
    parser.add_argument("--top", type=int, default=40, help="functions listed")
    options = parser.parse_args()
    names = [name for name in WORKLOADS if options.workload in name]
    if len(names) != 1:
        print(f"step_calls: {options.workload!r} names {len(names)} workloads of {list(WORKLOADS)}", file=sys.stderr)
        return 2
    step = WORKLOADS[names[0]]()
    for _ in range(3):
        step()
    with autograd_doctor.watch():
        for _ in range(8):
            step()
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(options.steps):
            step()
        profile.disable()
    rows = []
    for (filename, _line, function), (_primitive, calls, _own, _total, _callers) in pstats.Stats(profile).stats.items():
        if f"autograd_doctor{os.sep}" in filename:
            module = filename.split(f"autograd_doctor{os.sep}")[-1]
            rows.append((calls / options.steps, f"{module}:{function}"))
    print(f"{names[0]}: {sum(calls for calls, _ in rows):.0f} calls per step into autograd_doctor")
    for calls, where in sorted(rows, reverse=True)[:options.top]:
        print(f"{calls:8.1f}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
