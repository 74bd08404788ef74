"""Lint speed against pyflakes, and `-j N` scaling across files.

1. Lints the same files with autograd-doctor's linter and with pyflakes
   (through its API), in one process, with interleaved repetitions, and prints
   medians, lines per second and the time ratio (ours / pyflakes).  By default
   the files are the installed torch's own ``torch/nn`` and ``torch/optim``
   (expert-written code: every default finding there would be a false alarm).
2. Runs the command line, ``autograd-doctor lint -j N``, on the same files for
   each N in ``--jobs`` and prints wall-clock medians and the speed-up over -j 1.

    python benchmarks/lint_speed.py [--repeat N] [--jobs 1,2,4] [PATH ...]

Targets: ratio <= 1.0 (no slower than pyflakes); the speed-up grows with N up
to the number of cores.  Exit status 1 when the ratio target is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import pyflakes.api
import pyflakes.reporter
import torch

from autograd_doctor.lint.engine import lint_source
from autograd_doctor.lint.files import iter_python_files


class _SilentReporter(pyflakes.reporter.Reporter):
    def __init__(self):
        self.count = 0

    def unexpectedError(self, filename, message):
        self.count += 1

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.count += 1

    def flake(self, message):
        self.count += 1


def read_sources(paths: list[str]) -> dict[str, str]:
    sources = {}
    for root in paths:
        files = [root] if os.path.isfile(root) else iter_python_files(
            root, exclude=("__pycache__", ".git"), respect_gitignore=False)
        for path in files:
            try:
                with open(path, encoding="utf-8") as f:
                    sources[path] = f.read()
            except (OSError, UnicodeDecodeError):
                continue
    return sources


def compare_with_pyflakes(sources: dict[str, str], repeat: int) -> float:
    lines = sum(s.count("\n") for s in sources.values())

    def run_ours():
        found = []
        for path, source in sources.items():
            found += lint_source(source, path)
        return found

    def run_pyflakes():
        reporter = _SilentReporter()
        for path, source in sources.items():
            pyflakes.api.check(source, path, reporter)
        return reporter.count

    run_ours(), run_pyflakes()  # warm up (imports, saves table)
    ours_t, flakes_t = [], []
    findings, flakes = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        findings = run_ours()
        t1 = time.perf_counter()
        flakes = run_pyflakes()
        t2 = time.perf_counter()
        ours_t.append(t1 - t0)
        flakes_t.append(t2 - t1)
    ours, theirs = statistics.median(ours_t), statistics.median(flakes_t)
    print(f"{len(sources)} files, {lines} lines")
    print(f"autograd-doctor lint: {ours:.3f} s median of {repeat}  ({lines / ours:,.0f} lines/s, "
          f"{len(findings)} findings)")
    print(f"pyflakes            : {theirs:.3f} s median of {repeat}  ({lines / theirs:,.0f} lines/s, "
          f"{flakes} pyflakes messages)")
    print(f"ratio (ours / pyflakes time): {ours / theirs:.2f}  (target <= 1.0)")
    for f in findings[:20]:
        print(f"  {f.file}:{f.line}:{f.column}: {f.code} {f.message}")
    return ours / theirs


def jobs_scaling(paths: list[str], jobs: list[int], repeat: int) -> None:
    command = [sys.executable, "-m", "autograd_doctor.cli", "lint", "--exit-zero", "-q",
               "--format", "concise", "--no-gitignore"]
    times: dict[int, list[float]] = {n: [] for n in jobs}
    for _ in range(repeat):
        for n in jobs:
            t0 = time.perf_counter()
            subprocess.run(command + ["-j", str(n)] + paths, check=True, stdout=subprocess.DEVNULL)
            times[n].append(time.perf_counter() - t0)
    base = statistics.median(times[jobs[0]])
    print(f"command line, wall clock (median of {repeat}, {os.cpu_count()} CPUs here):")
    for n in jobs:
        t = statistics.median(times[n])
        print(f"  -j {n}: {t:.2f} s  (speed-up {base / t:.2f}x over -j {jobs[0]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="files or directories (default: torch/nn, torch/optim)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", default="1,2", help="comma-separated -j values to time (default 1,2)")
    args = parser.parse_args()
    root = os.path.dirname(torch.__file__)
    paths = args.paths or [os.path.join(root, "nn"), os.path.join(root, "optim")]
    print(f"torch {torch.__version__}; linting {', '.join(paths)}")
    ratio = compare_with_pyflakes(read_sources(paths), args.repeat)
    jobs_scaling(paths, [int(j) for j in args.jobs.split(",")], max(1, args.repeat // 2))
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
