"""Lint cost against pyflakes in instructions (valgrind's callgrind), not seconds.

Wall time on a shared machine moves with the load by more than a change to the
linter does (docs/lint.md, "Performance").  Instruction counts do not: the same
program on the same input gives the same count whatever else runs.  This
script runs four programs under ``valgrind --tool=callgrind`` on the same
files (by default the installed torch's ``torch/nn`` and ``torch/optim``):

- pyflakes: import, read the files, check each one;
- pyflakes, imports only: import and read, no check;
- autograd-doctor lint: import, read, ``lint_source`` on each file;
- lint, imports only.

and prints the counts and two ratios, ours / pyflakes: the checking work alone
(each count less its imports-only count) and the whole run.  Byte code is
compiled once beforehand into a temporary cache (``PYTHONPYCACHEPREFIX``), as
an installed package's is, so that compiling our modules is not counted, and
the hash seed is fixed (string hashes order sets, and so move the counts by
about 1%).  To compare two versions of the linter, run the script with each
on ``PYTHONPATH``.

    python benchmarks/lint_instructions.py [PATH ...]

Needs valgrind (Debian: ``apt-get install valgrind``); takes a few minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

_MODES = ("pyflakes", "pyflakes-imports", "lint", "lint-imports")


def python_files(paths: list[str]) -> list[str]:
    files = []
    for root in paths:
        if os.path.isfile(root):
            files.append(root)
            continue
        for folder, _, names in os.walk(root):
            files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    return sorted(files)


def run_one(mode: str, files: list[str]) -> None:
    """The measured program: import the checker, read the files, check them."""
    if mode.startswith("pyflakes"):
        import pyflakes.api
        import pyflakes.reporter

        class Quiet(pyflakes.reporter.Reporter):
            def __init__(self):
                pass

            def unexpectedError(self, filename, message):
                pass

            def syntaxError(self, filename, msg, lineno, offset, text):
                pass

            def flake(self, message):
                pass

        def check(source, path):
            pyflakes.api.check(source, path, Quiet())
    else:
        from autograd_doctor.lint.engine import lint_source

        def check(source, path):
            lint_source(source, path)
    for path in files:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        if not mode.endswith("-imports"):
            check(source, path)


def count_instructions(mode: str, list_file: str, env: dict) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--one", mode, "--file-list", list_file]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if not found:
        raise SystemExit(f"callgrind printed no count for {mode}:\n{result.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--one", choices=_MODES, help=argparse.SUPPRESS)
    parser.add_argument("--file-list", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        with open(args.file_list, encoding="utf-8") as f:
            run_one(args.one, f.read().split("\n"))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    paths = args.paths
    if not paths:
        import torch  # only to find its files; the measured programs do not import it
        root = os.path.dirname(torch.__file__)
        paths = [os.path.join(root, "nn"), os.path.join(root, "optim")]
    files = python_files(paths)
    with tempfile.TemporaryDirectory() as tmp:
        list_file = os.path.join(tmp, "files.txt")
        with open(list_file, "w", encoding="utf-8") as f:
            f.write("\n".join(files))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
        env["PYTHONHASHSEED"] = "0"  # set and dict orders, hence counts, repeat from run to run
        for mode in ("pyflakes", "lint"):  # fill the byte-code cache, uncounted
            subprocess.run([sys.executable, __file__, "--one", mode + "-imports",
                            "--file-list", list_file], env=env, check=True)
        counts = {mode: count_instructions(mode, list_file, env) for mode in _MODES}
    print(f"{len(files)} files")
    for mode in _MODES:
        print(f"{mode:<17} {counts[mode]:>15,} instructions")
    work = (counts["lint"] - counts["lint-imports"]) / (counts["pyflakes"] - counts["pyflakes-imports"])
    whole = counts["lint"] / counts["pyflakes"]
    print(f"ratio (ours / pyflakes), checking only: {work:.3f}  (target <= 1.0)")
    print(f"ratio (ours / pyflakes), whole run:     {whole:.3f}")
    return 0 if work <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
