"""Measure autograd-doctor on a folder of re-created bug reports, as a new user would run it.

    python scripts/measure_bug_set.py FOLDER [--json OUT] [--only NAME]

FOLDER holds `cases/NAME.py` (the buggy program, its report's URL and `expect: raises|silent`
in the docstring) and `correct/NAME.py` (the hand-written correct version: the accepted answer's
fix). Both leave a global `result` (tensors, or lists/dicts of tensors: losses, gradients,
parameters) that the correct version defines as what the program means.

For each case it runs `autograd-doctor run --verify-fix --json` on the buggy program (or, where
this autograd-doctor has `run --fix`, `run --fix` on a scratch copy) and reports:

- diagnosed: the report has a diagnosis (a code);
- line named: the first diagnosis's primary location is a line the correct version changes
  (difflib between the two files);
- help right: the tool's change, applied (by `run --fix` where there is one; otherwise the first
  help with code, applied to a copy as `--verify-fix` does), gives a program whose `result`
  equals the correct version's (torch.allclose, rtol 1e-5, atol 1e-6);
- help wrong: that changed program runs, but its `result` differs from the correct version's
  (the help changed what the program means);
- no help: no change offered, or the changed program still fails.

It also records what the tool itself said about its change (`verified` / `not verified` /
`unverified`), so a help the tool called verified but that is wrong shows up.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

RUN_TIMEOUT_S = 900
PROGRAM_TIMEOUT_S = 600

SAVE_RESULT = (
    "import runpy, sys, torch\n"
    "namespace = runpy.run_path(sys.argv[1], run_name='__main__')\n"
    "torch.save(namespace['result'], sys.argv[2])\n"
)


def changed_lines(buggy: str, correct: str) -> set[int]:
    """Lines of the buggy program (1-based) that the correct version replaces or deletes; for a
    pure insertion, the line before it, skipping comment and blank lines (no diagnosis names a
    comment: `else:` / `# a comment` / inserted line anchors on the `else:`)."""
    lines: set[int] = set()
    buggy_lines = buggy.splitlines()
    matcher = difflib.SequenceMatcher(a=buggy_lines, b=correct.splitlines(), autojunk=False)
    for tag, a_start, a_end, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lines.update(range(a_start + 1, a_end + 1))
        elif tag == "insert":
            anchor = max(a_start, 1)
            while anchor > 1 and buggy_lines[anchor - 1].strip().startswith("#") or \
                    anchor > 1 and not buggy_lines[anchor - 1].strip():
                anchor -= 1
            lines.add(anchor)
    return lines


def expectation(source: str) -> str:
    found = re.search(r"expect:\s*(raises|silent)", source)
    return found.group(1) if found else "raises"


def statement_end(source: str, line: int, replacement: str) -> int:
    """The last line of the statement that starts at `line` (helps replace whole statements),
    or of its header when the replacement is a header (`with torch.no_grad():`), as
    `--verify-fix` applies it."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and node.lineno == line:
            body = getattr(node, "body", None)
            if body and isinstance(body, list) and replacement.rstrip().endswith(":"):
                return body[0].lineno - 1
            return node.end_lineno or line
    return line


# The changes --verify-fix chained after the first: writes of one kind, or one silent problem at several lines.
CHAINED = ("and the next write of the same kind", "and the next line of the same kind")


def apply_first_help(source: str, report: dict, path: str) -> tuple[str | None, int | None]:
    """The program with the first help that is code applied (what `--verify-fix` applies), and the
    helps chained after it (the next writes of the same kind), from the bottom up."""
    chain: list[dict] = []
    for diagnosis in report.get("diagnoses", []):
        for suggestion in diagnosis.get("help_details", []):
            replacement, line = suggestion.get("replacement"), suggestion.get("line")
            if not replacement or not line:
                continue
            if os.path.abspath(suggestion.get("file", path)) != os.path.abspath(path):
                continue
            if chain and not suggestion.get("message", "").startswith(CHAINED):
                break
            chain.append(suggestion)
        if chain:
            break
    if not chain:
        return None, None
    for suggestion in sorted(chain, key=lambda s: s["line"], reverse=True):
        line, replacement = suggestion["line"], suggestion["replacement"]
        end = suggestion.get("end_line") or statement_end(source, line, replacement)
        lines = source.splitlines(keepends=True)
        indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
        new = [indent + part + "\n" for part in replacement.split("\n")]
        source = "".join(lines[: line - 1] + new + lines[end:])
    return source, chain[0]["line"]


def run_result(path: str, out: str) -> str | None:
    """Run a program plainly and save its `result`; None, or why it failed."""
    completed = subprocess.run([sys.executable, "-c", SAVE_RESULT, path, out], capture_output=True,
                               text=True, timeout=PROGRAM_TIMEOUT_S, cwd=os.path.dirname(path))
    if completed.returncode != 0:
        tail = completed.stderr.strip().splitlines()[-1:] or ["exit %d" % completed.returncode]
        return tail[0]
    return None


def same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def tool_has_fix() -> bool:
    completed = subprocess.run([sys.executable, "-m", "autograd_doctor", "run", "--help"],
                               capture_output=True, text=True, timeout=60)
    return "--fix" in completed.stdout


def tool_said(stderr: str) -> str:
    for line in reversed(stderr.splitlines()):
        for word in ("not verified", "unverified", "verified"):
            if line.startswith(word):
                return line.strip()
    return ""


def measure_case(folder: str, name: str, scratch: str, with_fix: bool, no_rerun: bool = False) -> dict:
    case_path = os.path.join(folder, "cases", name + ".py")
    correct_path = os.path.join(folder, "correct", name + ".py")
    with open(case_path, encoding="utf-8") as stream:
        buggy = stream.read()
    with open(correct_path, encoding="utf-8") as stream:
        correct = stream.read()
    work = os.path.join(scratch, name)
    os.makedirs(work)
    program = os.path.join(work, name + ".py")
    shutil.copy(case_path, program)
    report_path = os.path.join(work, "report.json")
    options = (["--fix"] if with_fix else ["--verify-fix"]) + (["--no-rerun"] if no_rerun else [])
    completed = subprocess.run([sys.executable, "-m", "autograd_doctor", "run", *options, "--json", report_path,
                                program], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=work,
                               stdin=subprocess.DEVNULL)
    try:
        with open(report_path, encoding="utf-8") as stream:
            report = json.load(stream)
    except (OSError, ValueError):
        report = {}
    diagnoses = report.get("diagnoses", [])
    want = changed_lines(buggy, correct)
    first = diagnoses[0] if diagnoses else {}
    primary = first.get("primary") or {}
    named = bool(primary) and bool(want & set(range(primary.get("line", 0), (primary.get("end_line") or primary.get("line", 0)) + 1)))
    row = {"name": name, "expect": expectation(buggy), "codes": [d.get("code") for d in diagnoses],
           "diagnosed": bool(diagnoses), "primary_line": primary.get("line"), "lines_to_change": sorted(want),
           "line_named": named, "tool_said": tool_said(completed.stderr)}
    reference = os.path.join(work, "correct.pt")
    problem = run_result(correct_path, reference)
    if problem:
        raise SystemExit(f"{name}: the correct version fails: {problem}")
    offered, _ = apply_first_help(buggy, report, program)
    row["help"], failure = judge_change(offered, work, "offered", name, reference)
    if failure:
        row["help_failure"] = failure
    if with_fix:
        with open(program, encoding="utf-8") as stream:
            written = stream.read()
        if written == buggy:
            row["fix_written"] = "none"
        elif written == offered:
            row["fix_written"] = row["help"]
        else:
            row["fix_written"], _ = judge_change(written, work, "written", name, reference)
    return row


def judge_change(changed: str | None, work: str, label: str, name: str, reference: str) -> tuple[str, str]:
    """right / wrong / still fails / none, for a changed program against the correct version."""
    if changed is None:
        return "none", ""
    fixed_path = os.path.join(work, label, name + ".py")
    os.makedirs(os.path.dirname(fixed_path))
    with open(fixed_path, "w", encoding="utf-8") as stream:
        stream.write(changed)
    got = os.path.join(work, label + ".pt")
    problem = run_result(fixed_path, got)
    if problem:
        return "still fails", problem
    import torch

    return ("right" if same(torch.load(got), torch.load(reference)) else "wrong"), ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--only", help="one case by name")
    parser.add_argument("--jobs", type=int, default=1, help="cases measured at once (each runs its own children)")
    parser.add_argument("--no-rerun", action="store_true",
                        help="pass --no-rerun to autograd-doctor run (the second, full-mode run only adds the save line)")
    arguments = parser.parse_args()
    names = sorted(name[:-3] for name in os.listdir(os.path.join(arguments.folder, "cases")) if name.endswith(".py"))
    if arguments.only:
        names = [arguments.only]
    with_fix = tool_has_fix()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="measure-bug-set-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
        futures = [pool.submit(measure_case, os.path.abspath(arguments.folder), name, scratch, with_fix,
                               arguments.no_rerun) for name in names]
        for future in concurrent.futures.as_completed(futures):
            row = future.result()
            rows.append(row)
            if arguments.json:  # row by row, so a long measurement can be read while it runs
                with open(arguments.json + ".rows", "a", encoding="utf-8") as stream:
                    stream.write(json.dumps(row) + "\n")
            print(f"{row['name']:40} {','.join(c or '?' for c in row['codes'][:3]) or '-':18} "
                  f"named={'yes' if row['line_named'] else 'no ':3} help={row['help']:11} "
                  f"{'fix=' + row['fix_written'] + ' ' if 'fix_written' in row else ''}{row['tool_said'][:70]}",
                  flush=True)
    total = len(rows)
    summary = {
        "cases": total,
        "silent": sum(r["expect"] == "silent" for r in rows),
        "diagnosed": sum(r["diagnosed"] for r in rows),
        "line_named": sum(r["line_named"] for r in rows),
        "help_right": sum(r["help"] == "right" for r in rows),
        "help_wrong": sum(r["help"] == "wrong" for r in rows),
        "called_verified_but_wrong": sum(r["help"] == "wrong" and r["tool_said"].startswith("verified") for r in rows),
        "tool_said_verified": sum(r["tool_said"].startswith("verified") for r in rows),
        "fix_written": sum(r.get("fix_written", "none") != "none" for r in rows),
        "fix_written_right": sum(r.get("fix_written") == "right" for r in rows),
        "fix_written_wrong": sum(r.get("fix_written") in ("wrong", "still fails") for r in rows),
        "method": ("run --fix --json; help = the first help offered (and the writes of the same kind chained "
                   "after it) applied; fix_written = what --fix wrote") if with_fix
                  else "run --verify-fix --json; help = the first help with code applied (as --verify-fix does)",
    }
    print(json.dumps(summary, indent=1))
    if arguments.json:
        with open(arguments.json, "w", encoding="utf-8") as stream:
            json.dump({"summary": summary, "rows": rows}, stream, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
