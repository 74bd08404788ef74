"""Measure the doctor on the held-out variants of the error catalogue (tests/errors/variants) and
print one row per variant and the figures of docs/errors.md ("Held-out variants").

Set 1 was written before any change to the doctor, set 2 after the fixes its first run led to,
set 3 after those (each set measured once before the changes its misses led to).
For each variant: whether the doctor gives the code of the catalogue's program for the same
message, whether its primary location is the line marked `# PRIMARY`, and whether its first
concrete help, applied, makes the program compute what the hand-written correct version
computes (tests/errors/held_out.py). Run: python scripts/held_out_variant_figures.py
[--set N] (with PYTHONPATH pointing at the copy of the package to measure); --set measures one
set only (its `# set:` header)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "errors"))
warnings.simplefilter("ignore")

import autograd_doctor  # noqa: E402
from held_out import header, judge, variant_names  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="held_out_set", help="measure only the variants of this set")
    arguments = parser.parse_args()
    names = [name for name in variant_names()
             if arguments.held_out_set is None or header(name).get("set", "1") == arguments.held_out_set]
    print(f"package: {os.path.dirname(autograd_doctor.__file__)}")
    with tempfile.TemporaryDirectory() as scratch:
        rows = [judge(name, scratch) for name in names]
    for row in rows:
        print(f"| `{row['name']}` | {row['code']} | {', '.join(row['codes']) or 'none'} | "
              f"{'yes' if row['located'] else 'no'} | {row['help'] or '-'} | {row['why']} |")
    for held_out_set in sorted({row["set"] for row in rows}, key=int):  # set 10 after set 9
        chosen = [row for row in rows if row["set"] == held_out_set]
        print()
        print(f"set {held_out_set}:")
        print(f"variants: {len(chosen)}")
        print(f"diagnosed with the catalogue's code: {sum(r['diagnosed'] for r in chosen)}")
        print(f"primary line is the marked line: {sum(r['located'] for r in chosen)}")
        print(f"first concrete help right by the oracle: {sum(r['help'] == 'right' for r in chosen)}; "
              f"wrong: {sum(r['help'] == 'wrong' for r in chosen)}; "
              f"advice only: {sum(r['help'] == 'advice' for r in chosen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
