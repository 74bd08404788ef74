"""`pytest --autograd-doctor-patch`: check a failing test's help on a copy, and print it as a patch.

The check is the one `autograd-doctor run --diff` makes (autograd_doctor.cli.verify_fix), for
one test instead of a script: two kinds of child `pytest` runs of that one test node,

- the oracle: the test as it is, with each tensor autograd saved copied before it is written
  (`recording.saved_values_kept`),
  recording its values (autograd_doctor.cli.meaning);
- the changed copy: the same node, with the module the help edits (the test file, or a file of
  yours it imports) compiled from a changed copy in a scratch folder, under the doctor, recording
  the same values. When the copy fails again with a help of its own, that help is applied too.

`meaning.judge` compares them; the unified diff and the verdict line go into the test's
`autograd-doctor` section. Nothing is written into your files: the copy lives in a temporary
folder and is imported in the child in place of your module (a meta path finder), the children
run with `-p no:cacheprovider` and without writing bytecode. The whole check is bounded by one
time limit (the smaller of 60 s and twice the test's time, at least MIN_PATCH_S for the two
interpreters to start; `--autograd-doctor-patch-limit SECONDS`).

The values compared are those of the test's own function: the tensors handed to backward() and
autograd.grad(), the parameters after optimizer steps, and the leaves that require grad (and
their `.grad`) held by the test function's locals, its fixtures' values and its module's
globals.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import time

# Set in a child pytest run: what it is for (JSON: mode, capture, report, files).
CHILD_VARIABLE = "AUTOGRAD_DOCTOR_PATCH_CHILD"
# The two child interpreters start and import torch and pytest: a short test still gets this long.
MIN_PATCH_S = 20.0
LIMIT_OPTION = "--autograd-doctor-patch-limit"


# ---- in the failing test's pytest process ------------------------------------------------


def patch_limit(test_s: float, configured_s: float | None) -> float:
    """How long the whole check may take: what the user set, else the smaller of 60 s and twice
    the test's time (as the full mode's second run), at least MIN_PATCH_S."""
    from autograd_doctor.cli import rerun

    if configured_s is not None:
        return configured_s
    return min(rerun.MAX_RERUN_S, max(MIN_PATCH_S, rerun.TIME_FACTOR * test_s))


def patch_section(item, diagnoses: list, error: BaseException, test_s: float, configured_s: float | None) -> str:
    """The text the test's `autograd-doctor` section gets after the report: the checked change
    as a unified diff and the verdict line, or one line saying why there is none. The helps
    are reordered as the CLI's (the checked one first, a rejected one last with a note)."""
    from autograd_doctor.cli.verify_fix import check_file, offer_checked_first, patch_text, why_no_change
    from autograd_doctor.diagnosis.source import shown_path

    edited = file_to_edit(diagnoses)
    if edited is None:
        return f"autograd-doctor: no patch: {why_no_change(diagnoses, str(item.path))}\n"
    limit = patch_limit(test_s, configured_s)
    if limit <= 0:
        return f"autograd-doctor: no patch: {LIMIT_OPTION}=0 turns the check off\n"
    runs = TestRuns(item, limit)
    check = check_file(edited, diagnoses, error, runs)
    offer_checked_first(check, diagnoses, error)
    header = (f"autograd-doctor: the help, checked on a copy of {shown_path(edited)} ({item.nodeid} ran again under "
              f"the oracle and changed; no file was written):\n")
    footer = ""
    if runs.ran_out:
        footer = (f"autograd-doctor: the check stopped at its time limit of {limit:g} s "
                  f"({LIMIT_OPTION} SECONDS changes it)\n")
    return header + patch_text(check) + footer


def file_to_edit(diagnoses: list) -> str | None:
    """The file of yours that the first help with code edits (a test file, or a module of yours
    it imports); None when no help is code in your files (installed code is never edited)."""
    from autograd_doctor.cli.verify_fix import library_dirs

    libraries = library_dirs()
    for diagnosis in diagnoses:
        for suggestion in diagnosis.help:
            location = suggestion.location
            if not suggestion.replacement or location is None or not os.path.isfile(location.file):
                continue
            real = os.path.realpath(location.file)
            if not any(real.startswith(folder) for folder in libraries):
                return os.path.abspath(location.file)
    return None


class TestRuns:
    """The two runs `verify_fix.check_file` compares, for one test: child `pytest` runs of its
    node, within one deadline for the whole check."""

    __test__ = False  # not a test class, whatever pytest collects

    def __init__(self, item, limit_s: float):
        self.item = item
        self.deadline = time.monotonic() + limit_s
        self.ran_out = False

    def original(self, script: str, scratch: str) -> dict | None:
        from autograd_doctor.cli.meaning import load

        capture = os.path.join(scratch, "original.pt")
        why_not = self._run({"mode": "oracle", "capture": capture, "report": "", "files": {}})
        return None if why_not else load(capture)

    def changed(self, copy: str, script: str, scratch: str) -> tuple[str | None, dict, dict]:
        from autograd_doctor.cli.meaning import load

        capture = os.path.join(scratch, "changed.pt")
        report_path = os.path.join(scratch, "report.json")
        for stale in (capture, report_path):
            if os.path.exists(stale):
                os.unlink(stale)
        why_not = self._run({"mode": "changed", "capture": capture, "report": report_path,
                             "files": {os.path.realpath(script): copy}})
        if why_not:
            return why_not, {}, {}
        try:
            with open(report_path, encoding="utf-8") as stream:
                report = json.load(stream)
        except (OSError, ValueError):
            report = {}
        values = load(capture)
        if values is None:
            return "the changed test could not be run (its module did not import, or pytest did not run it)", report, {}
        return None, report, values

    def _run(self, child: dict) -> str | None:
        """Run the test's node in a child pytest; why it could not finish, or None."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            self.ran_out = True
            return "the check ran out of time before this run"
        environment = dict(os.environ)
        environment[CHILD_VARIABLE] = json.dumps(child)
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  # the child writes no file of yours
        try:
            subprocess.run(child_command(self.item), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=environment, timeout=remaining,
                           cwd=str(self.item.config.invocation_params.dir))
        except subprocess.TimeoutExpired:
            self.ran_out = True
            return "the test did not finish within the check's time limit"
        except OSError as problem:
            return f"the test could not be run again ({problem})"
        return None


def child_command(item) -> list[str]:
    """`python -m pytest <this test's node>` with the session's rootdir and ini file, writing no
    cache; the plugin is loaded (also where plugin autoloading is off) and re-runs nothing."""
    config = item.config
    node = str(item.path)
    if "::" in item.nodeid:
        node += "::" + item.nodeid.split("::", 1)[1]
    command = [sys.executable, "-m", "pytest", node, "-q", "-p", "no:cacheprovider",
               "--rootdir", str(config.rootpath), "--autograd-doctor-no-rerun"]
    if config.inipath is not None:
        command += ["-c", str(config.inipath)]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        command[4:4] = ["-p", "autograd_doctor.integrations.pytest_plugin"]
    return command


# ---- in a child pytest run -----------------------------------------------------------


_child_spec: dict | None = None  # what this process is for, when it is a child of the check


def start_child() -> None:
    """At the start of a pytest process: when it is a child of the check, keep what it is for and
    take the variable out of the environment (a process the test starts, another pytest, is no
    child of ours), and import the modules the change edits from their changed copies."""
    global _child_spec
    text = os.environ.pop(CHILD_VARIABLE, None)
    if not text:
        return
    _child_spec = json.loads(text)
    if _child_spec["files"]:
        sys.meta_path.insert(0, ChangedModuleFinder(_child_spec["files"]))


def child_spec() -> dict | None:
    """What this pytest process is for, when it is a child of the check; None otherwise."""
    return _child_spec


class ChangedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds a module where Python would (so its package, conftest files and rootdir are the
    original's, and `module.__file__` is the original path pytest expects), and loads it from the
    changed copy: its code objects name the copy, whose lines the doctor's report then quotes.
    pytest's assertion rewriting does not apply to it (a failing assert still fails)."""

    def __init__(self, copies: dict[str, str]):
        self.copies = copies

    def find_spec(self, fullname, path, target=None):
        found = importlib.machinery.PathFinder.find_spec(fullname, path)
        if found is None or not found.origin:
            return None
        copy = self.copies.get(os.path.realpath(found.origin))
        if copy is None:
            return None
        return importlib.util.spec_from_file_location(fullname, found.origin, loader=ChangedCopyLoader(copy),
                                                      submodule_search_locations=found.submodule_search_locations)


class ChangedCopyLoader(importlib.abc.Loader):
    def __init__(self, copy: str):
        self.copy = copy

    def exec_module(self, module) -> None:
        with open(self.copy, encoding="utf-8") as stream:
            code = compile(stream.read(), self.copy, "exec", dont_inherit=True)
        exec(code, module.__dict__)


class ChildRun:
    """One run of the test in a child: the values recorded (and, for the changed copy, the doctor's
    report written) for the parent to compare."""

    def __init__(self, item, spec: dict):
        self.item = item
        self.spec = spec
        self.capture = None
        self.test_locals = None
        self.oracle = None
        self.watching = None
        self.doctor = None

    def start(self) -> "ChildRun":
        from autograd_doctor.cli.meaning import Capture
        from autograd_doctor.recording.saved_values_kept import keep_saved_values

        self.capture = Capture(self.spec["capture"]).start()
        if self.spec["mode"] == "oracle":
            self.oracle = keep_saved_values()
            self.oracle.__enter__()
        else:
            from autograd_doctor.doctor import watch

            self.watching = watch()
            self.doctor = self.watching.__enter__()
        self.test_locals = TestLocals(self.item).start()
        return self

    def finish(self, error: BaseException | None, diagnose) -> None:
        """`diagnose(doctor, error)`: the plugin's own function, so the copy is explained as a test is."""
        self.test_locals.stop()
        if self.oracle is not None:
            self.oracle.__exit__(None, None, None)
        if self.watching is not None:
            self.watching.__exit__(None, None, None)
            if error is not None and self.spec["report"]:
                from autograd_doctor.diagnosis.model import Report
                from autograd_doctor.report.json_report import write_json_report

                write_json_report(Report(diagnoses=diagnose(self.doctor, error)), self.spec["report"])
        namespace = {**getattr(self.item.module, "__dict__", {}), **getattr(self.item, "funcargs", {}),
                     **self.test_locals.values}
        self.capture.finish(namespace, error)


class TestLocals:
    """The local variables of the test function when it returns or raises (sys.settrace, on that
    one frame: the child runs only this test)."""

    __test__ = False

    def __init__(self, item):
        function = inspect.unwrap(getattr(item.obj, "__func__", item.obj))
        self.code = getattr(function, "__code__", None)
        self.values: dict = {}
        self.previous = None

    def start(self) -> "TestLocals":
        self.previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def stop(self) -> None:
        sys.settrace(self.previous)

    def _on_call(self, frame, event, arg):
        if frame.f_code is not self.code:
            return None
        frame.f_trace_lines = False
        return self._in_test

    def _in_test(self, frame, event, arg):
        if event == "return":
            self.values = dict(frame.f_locals)
        return self._in_test
