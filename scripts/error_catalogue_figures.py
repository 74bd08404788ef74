"""Measure the error catalogue on its programs (tests/errors/programs) and print the figures
and the table rows of docs/errors.md.

For each program: PyTorch's message (run without the doctor), the code the doctor attaches
under watch(), whether its primary location is the line marked `# PRIMARY`, and whether the
concrete help, applied to the program text, makes it run with the hand-computed values
(the checks of tests/errors/test_catalogue.py). Run: python scripts/error_catalogue_figures.py
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import pathlib
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "errors"))
warnings.simplefilter("ignore")

import autograd_doctor  # noqa: E402
from catalogue import apply_suggestion, marked_line, program_source, run_plain, run_watched, write  # noqa: E402
from test_catalogue import CASES  # noqa: E402


def first_sentence(error: BaseException) -> str:
    text = str(error).split("\n")[0]
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= 110 else text[:107] + "..."


def measure(name: str, directory: pathlib.Path) -> dict:
    code, help_index, check = CASES[name]
    source = program_source(name)
    path = write(directory, source, name)
    plain_error, _ = run_plain(path)
    error = run_watched(path)
    found = [d for d in autograd_doctor.diagnoses_of(error) if d.code == code]
    row = {"name": name, "message": first_sentence(plain_error), "code": found[0].code if found else None,
           "located": False, "verified": None, "primary": "", "help": ""}
    if not found:
        return row
    diagnosis = found[0]
    row["located"] = diagnosis.primary is not None and diagnosis.primary.line == marked_line(source, "PRIMARY")
    row["primary"] = diagnosis.primary.note or diagnosis.primary.source if diagnosis.primary else ""
    row["help"] = diagnosis.help[0].message if diagnosis.help else ""
    if help_index is not None:
        try:
            fixed = apply_suggestion(source, diagnosis.help[help_index])
            fixed_error, namespace = run_plain(write(directory, fixed, f"{name}_fixed"))
            check(namespace) if fixed_error is None else None
            row["verified"] = fixed_error is None
        except AssertionError:
            row["verified"] = False
    return row


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        rows = [measure(name, pathlib.Path(scratch)) for name in sorted(CASES)]
    messages = {row["message"].split(":")[0] if row["message"].startswith("Function") else row["message"]
                for row in rows}
    for row in rows:
        verified = {True: "verified", False: "FAILS", None: "advice only"}[row["verified"]]
        print(f"| {row['message']} | {row['code'] or 'none'} | {row['primary']} | {row['help']} | "
              f"{verified} | `{row['name']}` |")
    print()
    print(f"programs: {len(rows)} (+1 DDP program, tests/errors/test_ddp.py)")
    print(f"distinct messages: {len(messages)}")
    print(f"diagnosed: {sum(1 for r in rows if r['code'])}")
    print(f"primary line is the marked line: {sum(1 for r in rows if r['located'])}")
    print(f"helps applied and verified: {sum(1 for r in rows if r['verified'])}; "
          f"failed: {sum(1 for r in rows if r['verified'] is False)}; "
          f"advice only: {sum(1 for r in rows if r['code'] and r['verified'] is None)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
