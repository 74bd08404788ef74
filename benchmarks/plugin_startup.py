"""The pytest plugin's cost against plain pytest, in instructions (valgrind), in one run.

Wall time on a shared machine moves with the load by more than the plugin costs
(docs/integrations.md, "Plugin start-up cost"); instruction counts do not. This script writes a
small suite (one file: N tests, each three SGD steps of a two-layer MLP) into a temporary
folder and runs pytest on it under ``valgrind --tool=cachegrind --cache-sim=no`` (total
instructions only) in each mode:

- plain: pytest with the plugin installed but not asked for (it is loaded by every pytest run
  in an environment where autograd-doctor is installed);
- default: ``--autograd-doctor``; full: the same with ``AUTOGRAD_DOCTOR_MODE=full``;
  strict: ``--autograd-doctor-strict``.

and prints each count and its ratio to plain's. With ``--tests 1`` and ``--tests N`` the
difference gives the cost of a later test. By default byte code is cached in a temporary
folder (``PYTHONPYCACHEPREFIX``, warmed by one run of each mode beforehand), as in an installed
package that can write its caches; ``--no-bytecode`` measures with ``PYTHONDONTWRITEBYTECODE=1``
(a read-only install, many container images), where every module imported is compiled again.
The hash seed is fixed. To compare two versions of the doctor, run the script with each on
``PYTHONPATH``.

    python benchmarks/plugin_startup.py [--tests 10] [--modes plain,default,full,strict] [--no-bytecode]

Needs valgrind; a few minutes a mode (pytest and torch's import run under valgrind).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

SUITE = '''"""Written by benchmarks/plugin_startup.py."""
import pytest
import torch


@pytest.mark.parametrize("i", range({tests}))
def test_step(i):
    torch.manual_seed(i)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(32, 8)
    for _ in range(3):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
    assert torch.isfinite(loss)
'''

MODES = {
    "plain": ([], {}),
    "default": (["--autograd-doctor"], {}),
    "full": (["--autograd-doctor"], {"AUTOGRAD_DOCTOR_MODE": "full"}),
    "strict": (["--autograd-doctor-strict"], {}),
}


def pytest_command(folder: str, mode: str) -> tuple[list[str], dict]:
    options, extra = MODES[mode]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, "test_suite.py"]
    return command, extra


def environment(cache: str | None, extra: dict) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", **extra)
    if "AUTOGRAD_DOCTOR_MODE" not in extra:
        env.pop("AUTOGRAD_DOCTOR_MODE", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def instructions(folder: str, mode: str, cache: str | None) -> int:
    command, extra = pytest_command(folder, mode)
    out = os.path.join(folder, f"cachegrind.{mode}")
    run = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                          *command], cwd=folder, env=environment(cache, extra), capture_output=True, text=True)
    if " passed" not in run.stdout:
        raise SystemExit(f"{mode}: pytest did not pass:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if found is None:
        raise SystemExit(f"{mode}: no instruction count in valgrind's output:\n{run.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--modes", default="plain,default,full,strict")
    parser.add_argument("--no-bytecode", action="store_true")
    options = parser.parse_args()
    modes = options.modes.split(",")
    if "plain" not in modes:
        modes.insert(0, "plain")
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "test_suite.py"), "w", encoding="utf-8") as stream:
            stream.write(SUITE.format(tests=options.tests))
        cache = None if options.no_bytecode else os.path.join(folder, "pycache")
        if cache is not None:
            for mode in modes:  # warm the byte-code cache (also pytest's rewritten test file)
                command, extra = pytest_command(folder, mode)
                subprocess.run(command, cwd=folder, env=environment(cache, extra), capture_output=True)
        counts = {}
        for mode in modes:
            counts[mode] = instructions(folder, mode, cache)
            print(f"{mode:8} {counts[mode]:>16,} instructions  {counts[mode] / counts.get('plain', counts[mode]):.3f}"
                  " x plain", flush=True)


if __name__ == "__main__":
    main()
