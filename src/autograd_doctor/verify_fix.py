"""`autograd-doctor run --verify-fix`: check the first help on the user's own program.

The first help that is a change to the code is applied to a scratch copy of the script
(the user's file is never written), and the copy runs again under the doctor, in a child
process, with the same arguments, stdin closed, within a time limit. The answer is one
line: `verified: backward succeeded with this change`, or `not verified: <why>`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from autograd_doctor.analysis.fixes import apply_replacement
from autograd_doctor.report.model import Diagnosis, Suggestion

VERIFIED = "verified: backward succeeded with this change"
# The re-run may take this many times the first run's time, plus a margin.
TIME_FACTOR = 3
TIME_MARGIN_S = 120.0  # starting python and importing torch again, on a busy machine


def first_change(diagnoses: list[Diagnosis]) -> tuple[Diagnosis, Suggestion] | None:
    """The first help that is code to write, with its diagnosis."""
    for diagnosis in diagnoses:
        for suggestion in diagnosis.help:
            if suggestion.replacement and suggestion.location is not None:
                return diagnosis, suggestion
    return None


def verify_first_help(options, diagnoses: list[Diagnosis], elapsed_s: float) -> str:
    """Apply the first help to a copy of `options.script`, run it, and say whether it worked."""
    if options.script is None:
        return "not verified: --verify-fix needs a script file, not -m module"
    if not diagnoses:
        return "not verified: autograd-doctor reported nothing to fix"
    found = first_change(diagnoses)
    if found is None:
        return ("not verified: the help is advice, not a change autograd-doctor can apply; "
                f"look at {_where(diagnoses[0])}")
    diagnosis, suggestion = found
    script = os.path.abspath(options.script)
    if os.path.abspath(suggestion.location.file) != script:
        return f"not verified: the change is in {suggestion.location.file}, not in {options.script}"
    with open(script, encoding="utf-8") as stream:
        source = stream.read()
    changed = apply_replacement(source, suggestion.location, suggestion.replacement)
    try:
        compile(changed, script, "exec")
    except SyntaxError as problem:
        return f"not verified: the changed file does not parse ({problem.msg}, line {problem.lineno})"
    limit = TIME_FACTOR * elapsed_s + TIME_MARGIN_S
    with tempfile.TemporaryDirectory(prefix="autograd-doctor-verify-") as scratch:
        copy = os.path.join(scratch, os.path.basename(script))
        with open(copy, "w", encoding="utf-8") as stream:
            stream.write(changed)
        why_not, exit_code, report = _run_copy(copy, os.path.dirname(script), options,
                                               os.path.join(scratch, "report.json"), limit)
    print(f"autograd-doctor: --verify-fix applied the help for {diagnosis.code} at line "
          f"{suggestion.location.line} to a copy of {options.script} and ran it again", file=sys.stderr)
    return why_not or _judge(diagnosis, exit_code, report)


def _where(diagnosis: Diagnosis) -> str:
    if diagnosis.primary is None:
        return f"the {diagnosis.code} report above"
    return f"line {diagnosis.primary.line} ({diagnosis.code})"


def _run_copy(copy: str, script_dir: str, options, report_path: str,
              limit: float) -> tuple[str | None, int, dict]:
    """Run the changed copy under the doctor: (why it could not run or None, exit code, JSON report)."""
    command = [sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", "--json", report_path]
    if options.capture != "patch":
        command += ["--capture", options.capture]
    command += [copy, *options.args]
    environment = dict(os.environ)
    # The copy lives in a scratch folder: the script's own folder stays importable.
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, (script_dir, environment.get("PYTHONPATH"))))
    try:
        completed = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=environment, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"not verified: the changed program did not finish within {limit:.0f} s", -1, {}
    try:
        with open(report_path, encoding="utf-8") as stream:
            report = json.load(stream)
    except (OSError, ValueError):
        tail = completed.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return (f"not verified: the changed program exited with status {completed.returncode} ({tail[0]})",
                completed.returncode, {})
    return None, completed.returncode, report


def _judge(diagnosis: Diagnosis, exit_code: int, report: dict) -> str:
    exception = report.get("exception")
    if exception:
        message = (exception.get("message") or "").strip().splitlines()[:1]
        return f"not verified: the changed program still fails: {exception['type']}: {message[0] if message else ''}"
    for other in report.get("diagnoses", []):
        if other.get("code") == diagnosis.code:
            line = (other.get("primary") or {}).get("line")
            return f"not verified: autograd-doctor still reports {diagnosis.code} at line {line}"
    if exit_code != 0:
        return f"not verified: the changed program exited with status {exit_code}"
    return VERIFIED
