"""`autograd-doctor run --verify-fix / --diff / --fix`: check the helps on the user's own program.

Each help that is a change to the code is applied to a scratch copy of the script (the user's
file is not touched here), and the copy runs again under the doctor in a child process, with
the same arguments, stdin closed and a time limit. When the copy fails again with a help of its
own (a second write of the same kind: `u *= s; v *= t`), that help is applied too, and so on
until the copy runs or no help is left. A silent problem at several lines (two `torch.tensor([...])`
of values with grad history) is one problem too: while the copy that runs still reports it, with a
help, at a line not changed yet, that help is applied as well. The changed program is then judged by its meaning
(autograd_doctor.cli.meaning): its forward values must equal the original run's, and its gradients
and stepped parameters the oracle's. A help that fails the check is not offered first; where no
oracle applies, the answer is *unverified*, with the reason.

The check itself (`check_file`) takes the two runs as a parameter: `ScriptRuns` for a script here,
`autograd_doctor.integrations.pytest_patch.TestRuns` for one test (`pytest --autograd-doctor-patch`).
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from autograd_doctor.analysis.fixes import apply_replacement
from autograd_doctor.cli.meaning import CAPTURE_VARIABLE, Verdict, judge, load
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import parse_quietly

# Each re-run may take this many times the first run's time, plus a margin.
TIME_FACTOR = 3
TIME_MARGIN_S = 300.0  # starting python and importing torch again, on a busy machine
MAX_HELPS_TRIED = 3  # helps tried in turn when the first changes what the program means
MAX_ROUNDS = 5  # writes of one kind fixed one after the other in one program


@dataclass
class Change:
    """One statement replaced: where (in the program as it was then), what it said, what it says."""

    line: int
    end_line: int
    old: str
    new: str
    code: str
    message: str
    silent: bool = False  # applied because the copy still showed the same silent problem, not a failure


@dataclass
class Check:
    """What checking the helps found: the verdict, the changes behind it, the changed source."""

    verdict: Verdict
    script: str = ""
    source: str = ""
    changed_source: str = ""
    changes: list[Change] = field(default_factory=list)
    chosen: Suggestion | None = None
    rejected: list[tuple[Suggestion, Verdict]] = field(default_factory=list)
    capture: dict | None = None  # the changed program's values, until it is judged

    def diff(self) -> str:
        """The change as a unified diff of the user's file (empty when there is none)."""
        if not self.changes:
            return ""
        name = os.path.relpath(self.script) if not os.path.relpath(self.script).startswith("..") else self.script
        return "".join(difflib.unified_diff(self.source.splitlines(True), self.changed_source.splitlines(True),
                                            f"a/{name}", f"b/{name}"))


def code_helps(diagnoses: list[Diagnosis], script: str) -> list[tuple[Diagnosis, Suggestion]]:
    """The helps that are code to write in `script`, in the order the report gives them."""
    found = []
    for diagnosis in diagnoses:
        for suggestion in diagnosis.help:
            location = suggestion.location
            if suggestion.replacement and location is not None and _same_file(location.file, script):
                found.append((diagnosis, suggestion))
    return found


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(os.path.abspath(a)) == os.path.realpath(os.path.abspath(b))


def _statement_end(source: str, line: int, replacement: str) -> int:
    """The last line a help's replacement stands for: the whole statement at ``line``, or
    only the header of a compound one (`with torch.no_grad():` for `with
    torch.inference_mode():`) when the replacement is a header, so the body stays."""
    try:
        tree = parse_quietly(source)
    except SyntaxError:
        return line
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line:
            body = getattr(node, "body", None)
            if body and isinstance(body, list) and replacement.rstrip().endswith(":"):
                return body[0].lineno - 1
            return node.end_lineno or line
    return line


def apply_help(source: str, location: Location, replacement: str, diagnosis_code: str, message: str
               ) -> tuple[str, Change]:
    """`source` with the help's replacement in place of its statement (or of a compound statement's
    header), and the change made."""
    end = location.end_line or _statement_end(source, location.line, replacement)
    located = Location(location.file, location.line, location.column, end_line=end)
    old = "".join(source.splitlines(True)[location.line - 1:end])
    return apply_replacement(source, located, replacement), Change(location.line, end, old, replacement,
                                                                   diagnosis_code, message)


def check_helps(options, diagnoses: list[Diagnosis], error: BaseException | None, elapsed_s: float) -> Check:
    """Apply each help (and the helps the changed program then needs) to a copy, and judge it."""
    if options.script is None:
        return Check(Verdict("rejected", "checking a help needs a script file, not -m module"))
    runs = ScriptRuns(options, TIME_FACTOR * elapsed_s + TIME_MARGIN_S)
    return check_file(os.path.abspath(options.script), diagnoses, error, runs)


class ScriptRuns:
    """The two runs the check compares, for a script with its arguments (`autograd-doctor run`):
    the original under the oracle, and a changed copy under the doctor. The pytest plugin has
    its own for one test (autograd_doctor.integrations.pytest_patch.TestRuns)."""

    def __init__(self, options, limit_s: float):
        self.options = options
        self.limit_s = limit_s

    def original(self, script: str, scratch: str) -> dict | None:
        return _run_oracle(script, self.options, scratch, self.limit_s)

    def changed(self, copy: str, script: str, scratch: str) -> tuple[str | None, dict, dict]:
        return _run_copy(copy, os.path.dirname(script), self.options, scratch, self.limit_s)


def _failing_backward_line(diagnosis: Diagnosis) -> int | None:
    """The line of the backward() that raised, as the diagnosis shows it (role "backward")."""
    for location in [diagnosis.primary, *diagnosis.related]:
        if location is not None and location.role == "backward":
            return location.line
    return None


def check_file(script: str, diagnoses: list[Diagnosis], error: BaseException | None, runs) -> Check:
    """Apply the helps that are code in `script` to a copy, one after the other, run the copy and
    the original through `runs` (ScriptRuns, or a front end's equivalent), and judge the copy."""
    candidates = code_helps(diagnoses, script)
    if not diagnoses:
        return Check(Verdict("rejected", "autograd-doctor reported nothing to fix"))
    if not candidates:
        return Check(Verdict("rejected", why_no_change(diagnoses, script)))
    with open(script, encoding="utf-8") as stream:
        source = stream.read()
    with tempfile.TemporaryDirectory(prefix="autograd-doctor-verify-") as scratch:
        original = runs.original(script, scratch)
        if original is None:
            return Check(Verdict("rejected", "the original program could not be run again to compare with"))
        best: Check | None = None
        rejected: list[tuple[Suggestion, Verdict]] = []
        for diagnosis, suggestion in candidates[:MAX_HELPS_TRIED]:
            tried = _follow(source, script, diagnosis, suggestion, runs, scratch)
            if tried.verdict.status == "rejected" or not tried.changes:
                rejected.append((suggestion, tried.verdict))
                continue
            tried.verdict = judge(original, tried.capture, error is not None,
                                  recomputes_failing_forward=suggestion.recomputes_failing_forward,
                                  changes_failing_value=suggestion.changes_failing_value,
                                  corrects_earlier_steps=suggestion.corrects_earlier_steps,
                                  corrects_forward_values=suggestion.corrects_forward_values,
                                  failing_line=_failing_backward_line(diagnosis),
                                  cuts_carried_graph=getattr(suggestion, "cuts_carried_graph", False))
            if tried.verdict.status == "rejected":
                rejected.append((suggestion, tried.verdict))
                continue
            if best is None or (tried.verdict.status == "verified" and best.verdict.status != "verified"):
                best = tried
            if best.verdict.status == "verified":
                break
    if best is None:
        first_reason = rejected[0][1] if rejected else Verdict("rejected", "no help could be applied")
        return Check(first_reason, script, source, source, rejected=rejected)
    best.rejected = [(s, v) for s, v in rejected]
    return best


def why_no_change(diagnoses: list[Diagnosis], script: str) -> str:
    for diagnosis in diagnoses:
        for suggestion in diagnosis.help:
            if suggestion.replacement and suggestion.location is not None:
                return (f"the change is in {suggestion.location.file}, not in your program "
                        f"({os.path.basename(script)}); autograd-doctor never edits other files")
    first = diagnoses[0]
    where = f"line {first.primary.line} ({first.code})" if first.primary is not None else f"the {first.code} report"
    return f"the help is advice, not a change autograd-doctor can apply; look at {where}"


def _follow(source: str, script: str, diagnosis: Diagnosis, suggestion: Suggestion, runs, scratch: str) -> Check:
    """Apply `suggestion`, run the copy; while it fails with a help in its own file, apply that too."""
    copy = os.path.join(scratch, "copy", os.path.basename(script))
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    changed, change = apply_help(source, suggestion.location, suggestion.replacement, diagnosis.code,
                                 suggestion.message)
    changes = [change]
    for _ in range(MAX_ROUNDS):
        try:
            compile(changed, script, "exec")
        except SyntaxError as problem:
            return Check(Verdict("rejected", f"the changed file does not parse ({problem.msg}, line {problem.lineno})"))
        with open(copy, "w", encoding="utf-8") as stream:
            stream.write(changed)
        why_not, report, capture = runs.changed(copy, script, scratch)
        if why_not:
            return Check(Verdict("rejected", why_not))
        failed = bool(capture.get("error"))
        if failed:
            following = _next_help(report, copy)
        else:
            following = _next_help(report, copy, code=diagnosis.code, skip_lines={c.line for c in changes})
        if following is not None:
            code, replacement, location, message = following
            changed, change = apply_help(changed, location, replacement, code, message)
            change.silent = not failed
            changes.append(change)
            continue
        return Check(Verdict("ran", ""), script, source, changed, changes, chosen=suggestion, capture=capture)
    return Check(Verdict("rejected", f"the changed program still fails after {MAX_ROUNDS} changes"))


def _next_help(report: dict, copy: str, code: str | None = None, skip_lines: set[int] | frozenset[int] = frozenset()):
    """The first help with code, in the copy, that the copy's own report offers; with `code`, the
    first of a diagnosis with that code at a line not in `skip_lines` (the lines already changed)."""
    for other in report.get("diagnoses", []):
        if code is not None and other.get("code") != code:
            continue
        for detail in other.get("help_details", []):
            line, replacement = detail.get("line"), detail.get("replacement")
            if not line or not replacement or not _same_file(detail.get("file", ""), copy) or line in skip_lines:
                continue
            location = Location(copy, line, None, end_line=detail.get("end_line"))
            return other.get("code", ""), replacement, location, detail.get("message", "")
    return None


def _child_environment(script_dir: str, capture_path: str) -> dict:
    environment = dict(os.environ)
    # The copy lives in a scratch folder: the script's own folder stays importable.
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, (script_dir, environment.get("PYTHONPATH"))))
    environment[CAPTURE_VARIABLE] = capture_path
    return environment


def _run_oracle(script: str, options, scratch: str, limit: float) -> dict | None:
    """The original program's values, run under the oracle (autograd_doctor.cli.meaning)."""
    capture_path = os.path.join(scratch, "original.pt")
    command = [sys.executable, "-m", "autograd_doctor.cli.meaning", capture_path, script, *options.args]
    environment = _child_environment(os.path.dirname(script), "")
    environment.pop(CAPTURE_VARIABLE)
    try:
        subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=environment, timeout=limit, cwd=os.getcwd())
    except (subprocess.TimeoutExpired, OSError):
        return None
    return load(capture_path)


def _run_copy(copy: str, script_dir: str, options, scratch: str, limit: float) -> tuple[str | None, dict, dict]:
    """Run the changed copy under the doctor: (why it could not run or None, JSON report, values)."""
    report_path = os.path.join(scratch, "report.json")
    capture_path = os.path.join(scratch, "changed.pt")
    for stale in (report_path, capture_path):
        if os.path.exists(stale):
            os.unlink(stale)
    command = [sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", "--json", report_path]
    if options.capture != "patch":
        command += ["--capture", options.capture]
    command += [copy, *options.args]
    try:
        completed = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=_child_environment(script_dir, capture_path), timeout=limit)
    except subprocess.TimeoutExpired:
        return f"the changed program did not finish within {limit:.0f} s", {}, {}
    capture = load(capture_path)
    try:
        with open(report_path, encoding="utf-8") as stream:
            report = json.load(stream)
    except (OSError, ValueError):
        report = {}
    if capture is None:
        tail = completed.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return f"the changed program exited with status {completed.returncode} ({tail[0]})", report, {}
    return None, report, capture


def check_and_offer(options, doctor, error: BaseException | None, elapsed_s: float) -> Check:
    """Check the helps before the report is printed: a verified help goes first; a help that failed
    the check goes last, with a note saying why."""
    diagnoses = doctor.report(error).diagnoses
    print(f"autograd-doctor: checking the helps on a copy of {options.script} (the original runs again "
          f"under the oracle to compare with)", file=sys.stderr, flush=True)
    check = check_helps(options, diagnoses, error, elapsed_s)
    offer_checked_first(check, diagnoses, error)
    return check


def offer_checked_first(check: Check, diagnoses: list[Diagnosis], error: BaseException | None) -> None:
    """Reorder the helps by what the check found: the chosen help (and the next writes of the same
    kind) first, each help that failed the check last, with a note saying why."""
    for diagnosis in diagnoses:
        before = list(diagnosis.help)
        rejected = [s for s, _ in check.rejected if s in diagnosis.help]
        for suggestion, verdict in check.rejected:
            if suggestion in diagnosis.help:
                diagnosis.notes.append(f"autograd-doctor tried the help at line {suggestion.location.line} on a copy: "
                                       f"{verdict.line()}")
        # A help whose changed program computes other values than the original's would change what the
        # program means: it stays as text, not as a change to apply (the note above says why).
        rejected = [_as_advice(s) if any(s is r and v.computes_other_values for r, v in check.rejected)
                    else s for s in rejected]
        ordered = [s for s in diagnosis.help if s not in rejected and not any(s is r for r, _ in check.rejected)] \
            + rejected
        if check.chosen in ordered:
            ordered.remove(check.chosen)
            ordered[0:0] = [check.chosen, *_following_helps(check)]
            diagnosis.extra["verify"] = check.verdict.line()
        diagnosis.help = ordered
        if error is not None and (ordered != before or rejected):
            from autograd_doctor.doctor import reattach

            reattach(error, diagnosis, diagnosis)


def _as_advice(suggestion: Suggestion) -> Suggestion:
    """A help that failed the meaning check, as text: what it proposed, not offered as a change."""
    if not suggestion.replacement:
        return suggestion
    where = f"line {suggestion.location.line}" if suggestion.location is not None else "it"
    return Suggestion(f"{suggestion.message} (not offered as a change: on a copy, changing {where} this way "
                      "changed what the program computes)")


def _following_helps(check: Check) -> list[Suggestion]:
    """The changes after the first (the next writes of the same kind) as helps, at their lines in
    the user's file: each change's line is moved back by what earlier changes above it added."""
    helps = []
    for index, change in enumerate(check.changes[1:], start=1):
        shift = sum(len(c.new.split("\n")) - (c.end_line - c.line + 1)
                    for c in check.changes[:index] if c.line < change.line)
        line = change.line - shift
        location = Location(check.script, line, None, end_line=line + (change.end_line - change.line))
        if change.silent:
            message = f"and the next line of the same kind, which has the same problem ({change.code})"
        else:
            message = (f"and the next write of the same kind, which fails the same way once the one above is "
                       f"changed ({change.code})")
        helps.append(Suggestion(message, change.new, location))
    return helps


def show_and_write(options, check: Check) -> None:
    """Print what was applied, the verdict, the diff (--diff, --fix); write it (--fix, verified only)."""
    if check.changes:
        where = ", ".join(f"line {c.line} ({c.code})" for c in check.changes)
        print(f"autograd-doctor: applied {len(check.changes)} change(s) to a copy of {options.script} "
              f"({where}), ran it and compared it with the original", file=sys.stderr)
    print(check.verdict.line(), file=sys.stderr)
    if (options.diff or options.fix) and check.changes:
        sys.stderr.write(check.diff())
    if not options.fix:
        return
    if check.verdict.status != "verified" or not check.changes:
        print(f"autograd-doctor: --fix wrote nothing: the change is {check.verdict.status} (see above)", file=sys.stderr)
        return
    try:
        write_atomically({check.script: (check.source, check.changed_source)})
    except FixRefused as problem:
        print(f"autograd-doctor: --fix wrote nothing: {problem}", file=sys.stderr)
        return
    print(f"autograd-doctor: --fix wrote {len(check.changes)} change(s) into {options.script}", file=sys.stderr)


class FixRefused(Exception):
    pass


def library_dirs() -> list[str]:
    """The folders of installed code (the standard library, site-packages, torch, autograd-doctor),
    each ending with a separator: a file in one is never edited."""
    import sysconfig

    import torch

    dirs = {sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs.add(os.path.dirname(os.path.abspath(torch.__file__)))
    dirs.add(os.path.dirname(os.path.abspath(__file__)))
    return [os.path.realpath(d) + os.sep for d in dirs if d]


def write_atomically(files: dict[str, tuple[str, str]]) -> None:
    """Write every file's new text, or none: each is written to a temporary file next to it, and
    only when all are written are they moved into place (os.replace); a file that changed since it
    was read, or that lies in an installed library, refuses the whole write."""
    libraries = library_dirs()
    for path, (expected, _) in files.items():
        real = os.path.realpath(path)
        if any(real.startswith(d) for d in libraries):
            raise FixRefused(f"{path} is an installed library's file, not part of your project")
        with open(path, encoding="utf-8") as stream:
            if stream.read() != expected:
                raise FixRefused(f"{path} changed since the run; run again")
    written: list[tuple[str, str]] = []
    try:
        for path, (_, new_text) in files.items():
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".autograd-doctor-")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(new_text)
            os.chmod(temporary, os.stat(path).st_mode & 0o7777)
            written.append((temporary, path))
    except BaseException:
        for temporary, _ in written:
            os.unlink(temporary)
        raise
    replaced: list[str] = []
    try:
        for temporary, path in written:
            os.replace(temporary, path)
            replaced.append(path)
    except BaseException:
        for path in replaced:  # put back what was already replaced: all files or none
            with open(path, "w", encoding="utf-8") as stream:
                stream.write(files[path][0])
        for temporary, path in written:
            if path not in replaced and os.path.exists(temporary):
                os.unlink(temporary)
        raise


def patch_text(check: Check) -> str:
    """The checked change as printed patch text: the unified diff (when there is a change) and the
    verdict line; what the pytest plugin and `proposed_patch` print."""
    return check.diff() + check.verdict.line() + "\n"


def proposed_patch(script: str, diagnoses: list[Diagnosis], error: BaseException | None = None,
                   args: list[str] | None = None, elapsed_s: float = 10.0) -> str:
    """The checked change for `script` (run with `args`) as patch text, for a caller that prints a
    patch rather than writing it."""
    from types import SimpleNamespace

    options = SimpleNamespace(script=script, args=list(args or []), capture="patch")
    return patch_text(check_helps(options, diagnoses, error, elapsed_s))
