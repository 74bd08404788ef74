"""Lint speed and precision on expert-written code: torch/nn + torch/optim.

Lints the installed torch's own ``torch/nn`` and ``torch/optim`` with
autograd-doctor's linter and with pyflakes (through its API), single process,
in the same run, with interleaved repetitions, and prints medians, lines per
second, the time ratio (ours / pyflakes) and our findings.

    python benchmarks/lint_speed.py [--repeat N]

Targets: ratio <= 1.5 and at most 5 findings, each a real hazard.
"""

from __future__ import annotations

import argparse
import os
import statistics
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = os.path.dirname(torch.__file__)
    files = []
    for sub in ("nn", "optim"):
        files += list(iter_python_files(os.path.join(root, sub), exclude=("__pycache__",),
                                        respect_gitignore=False))
    sources = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            sources[path] = f.read()
    lines = sum(s.count("\n") for s in sources.values())
    print(f"torch {torch.__version__}: {len(files)} files, {lines} lines in torch/nn + torch/optim")

    def run_ours():
        found = []
        for path, source in sources.items():
            found += lint_source(source, os.path.relpath(path, os.path.dirname(root)))
        return found

    def run_pyflakes():
        reporter = _SilentReporter()
        for path, source in sources.items():
            pyflakes.api.check(source, path, reporter)
        return reporter.count

    run_ours(), run_pyflakes()  # warm up (imports, saves table)
    ours_t, flakes_t = [], []
    findings, flakes = [], 0
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        findings = run_ours()
        t1 = time.perf_counter()
        flakes = run_pyflakes()
        t2 = time.perf_counter()
        ours_t.append(t1 - t0)
        flakes_t.append(t2 - t1)
    ours, theirs = statistics.median(ours_t), statistics.median(flakes_t)
    print(f"autograd-doctor lint: {ours:.3f} s median of {args.repeat}  ({lines / ours:,.0f} lines/s)")
    print(f"pyflakes            : {theirs:.3f} s median of {args.repeat}  ({lines / theirs:,.0f} lines/s, "
          f"{flakes} pyflakes messages)")
    print(f"ratio (ours / pyflakes time): {ours / theirs:.2f}  (target <= 1.5)")
    print(f"findings: {len(findings)}  (target <= 5)")
    for f in findings:
        print(f"  {f.file}:{f.line}:{f.column}: {f.code} {f.message}")
    return 0 if ours / theirs <= 1.5 and len(findings) <= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
