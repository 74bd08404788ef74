"""pytest plugin: `pytest --autograd-doctor` runs each test under `watch()`.

The diagnoses of a failing test are added to its failure report as a section
("autograd-doctor"). `@pytest.mark.autograd_doctor` enables it for one test, with
optional watch() options: `@pytest.mark.autograd_doctor(strict=True)`. The ini
setting `autograd_doctor = true` turns it on for a whole project. With
`--autograd-doctor-patch`, a failing test's help is also checked on a copy and printed
as a patch (autograd_doctor.integrations.pytest_patch, which also runs the check's
child pytest processes).

The plugin is loaded by every pytest run in an environment where autograd-doctor is
installed, so it imports torch only when a test actually asks for the doctor.

Example (a test file)::

    import pytest, torch

    @pytest.mark.autograd_doctor
    def test_step():
        x = torch.ones(3, requires_grad=True)
        y = torch.sigmoid(x)
        y[0] = 0.0           # the failure report names this line
        y.sum().backward()
"""

from __future__ import annotations

import sys
import time

import pytest

SECTION = "autograd-doctor"
# How the report notes that autograd_doctor.doctor.attach adds to an exception start.
NOTE_START = "autograd-doctor:\n"


def internal_error() -> None:
    from autograd_doctor.doctor import internal_error as report_internal_error

    report_internal_error()


def pytest_addoption(parser):
    group = parser.getgroup("autograd-doctor")
    group.addoption("--autograd-doctor", action="store_true", default=False,
                    help="run every test under autograd_doctor.watch() and explain autograd failures")
    group.addoption("--autograd-doctor-strict", action="store_true", default=False,
                    help="like --autograd-doctor, with watch(strict=True)")
    group.addoption("--autograd-doctor-no-rerun", action="store_true", default=False,
                    help="do not re-run a failed test under the full mode when the report lacks the line that "
                         "saved the modified tensor")
    group.addoption("--autograd-doctor-patch", action="store_true", default=False,
                    help="like --autograd-doctor, and check a failing test's help on a copy (the test run again "
                         "under the oracle and changed): print it as a patch with the verdict; writes no file")
    group.addoption("--autograd-doctor-patch-limit", type=float, default=None, metavar="SECONDS",
                    help="time limit of the check of one test's help (default: the smaller of 60 s and twice "
                         "the test's time, at least 20 s; 0 turns the check off)")
    parser.addini("autograd_doctor", type="bool", default=False,
                  help="run every test under autograd_doctor.watch() (like --autograd-doctor)")
    parser.addini("autograd_doctor_patch", type="bool", default=False,
                  help="check a failing test's help on a copy and print it as a patch (like --autograd-doctor-patch)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "autograd_doctor(**options): run this test under autograd_doctor.watch(**options)")


def not_rewritten(pluginmanager) -> None:
    """pytest marks every module of a plugin's distribution for its assertion rewriting, so each
    of the doctor's modules (150 and more, imported at a session's first watched test) would be
    parsed, rewritten and compiled by pytest's import hook instead of loaded from its .pyc; where
    the rewritten code cannot be cached (PYTHONDONTWRITEBYTECODE, a read-only install) that is
    paid again in every session. Our modules hold no test assertions: take the package's mark off
    (pytest keeps the marks in the hook's `_must_rewrite`; without it, nothing changes)."""
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and __package__.split(".")[0] in marked:
        marked.discard(__package__.split(".")[0])
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """In a child run of `--autograd-doctor-patch`: the changed module is imported from its copy
    (also a conftest.py, which pytest imports right after this)."""
    not_rewritten(early_config.pluginmanager)
    from autograd_doctor.integrations.pytest_patch import start_child

    start_child()


def wants_patch(config) -> bool:
    return config.getoption("--autograd-doctor-patch") or config.getini("autograd_doctor_patch")


def watch_options_for(item) -> dict | None:
    """The watch() options for a test, or None when the doctor is off for it.

    The marker wins (its keyword arguments are the options), then
    `--autograd-doctor-strict`, then `--autograd-doctor` or the ini setting.

    Example::

        @pytest.mark.autograd_doctor(silent="raise")   # -> {"silent": "raise"}
        def test_something(): ...
    """
    marker = item.get_closest_marker("autograd_doctor")
    if marker is not None:
        return dict(marker.kwargs)
    config = item.config
    if config.getoption("--autograd-doctor-strict"):
        return {"strict": True}
    if config.getoption("--autograd-doctor") or config.getini("autograd_doctor") or wants_patch(config):
        return {}
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    from autograd_doctor.integrations.pytest_patch import child_spec

    spec = child_spec()
    if spec is not None:  # a child run of --autograd-doctor-patch: the check's own recording only
        from autograd_doctor.integrations.pytest_patch import ChildRun

        child = ChildRun(item, spec).start()
        outcome = yield
        child.finish(outcome.excinfo[1] if outcome.excinfo else kept_exception(item), diagnoses_for)
        return
    options = watch_options_for(item)
    if options is None:
        yield
        return
    from autograd_doctor.doctor import watch

    with watch(**options) as doctor:
        item._autograd_doctor = doctor
        outcome = yield
        # The test's exception does not pass through this `with` (the hook wrapper gets it as
        # an outcome): tell the doctor, so that it does not judge a run cut short as whole.
        doctor.stop(failed=outcome.excinfo is not None or kept_exception(item) is not None)


def diagnoses_for(doctor, error: BaseException | None) -> list:
    """What the doctor found during a test, plus what it attached to the test's exception."""
    if error is not None:
        from autograd_doctor.integrations.compiled import explain_from_traceback
        from autograd_doctor.doctor import explain_error

        explain_error(error)  # the test's exception never passes through watch().__exit__ here
        explain_from_traceback(error)  # a torch.compile failure: explained by an eager run
    return collected(doctor, error)


def collected(doctor, error: BaseException | None) -> list:
    """The doctor's diagnoses, then those attached to the exception that it does not hold."""
    from autograd_doctor.doctor import diagnoses_of

    diagnoses = list(doctor.diagnoses)
    for diagnosis in diagnoses_of(error) if error is not None else ():
        if diagnosis not in diagnoses:
            diagnoses.append(diagnosis)
    return diagnoses


def complete_with_full_mode(item, doctor, error: BaseException) -> None:
    """The default (light) mode found the write but not the save line: run this one test
    again, in this process, under the full mode (autograd_doctor.integrations.pytest_rerun), and
    report what it found instead (or why it found nothing)."""
    from autograd_doctor.cli import rerun
    from autograd_doctor.integrations.pytest_rerun import can_run_again, run_again_in_full_mode

    if item.config.getoption("--autograd-doctor-no-rerun") or not can_run_again(item):
        return
    light = rerun.wants_rerun(doctor, error)
    if light is None:
        return
    started = time.monotonic()
    diagnoses, why_not = run_again_in_full_mode(item, watch_options_for(item) or {}, diagnoses_for)
    rerun.adopt_full_report(doctor, error, light, diagnoses, why_not, what="the test",
                            switch="--autograd-doctor-no-rerun", took_s=time.monotonic() - started)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    doctor = item.__dict__.pop("_autograd_doctor", None) if call.when == "call" else None
    if doctor is None:  # popped: the doctor is not kept past the test
        yield
        return
    # Before pytest renders the failure: the traceback and the message as without the
    # doctor, and the report in one place, the section added below.
    error = test_exception(item, call)
    diagnoses = explained(item, doctor, error)
    patch = checked_patch(item, diagnoses, error, call.duration)
    if error is not None:
        from autograd_doctor.recording.own_frames import hide_our_frames

        hide_our_frames(error)
        remove_report_notes(error)
    outcome = yield
    if diagnoses:
        try:
            add_report(outcome.get_result(), diagnoses, error, patch)
        except Exception:
            internal_error()


def checked_patch(item, diagnoses: list, error: BaseException | None, test_s: float) -> str:
    """With --autograd-doctor-patch, for a failing test: its help checked on a copy, as patch text
    (autograd_doctor.integrations.pytest_patch); "" otherwise."""
    if error is None or not diagnoses or not wants_patch(item.config) or not isinstance(item, pytest.Function):
        return ""
    try:
        from autograd_doctor.integrations.pytest_patch import patch_section

        return patch_section(item, diagnoses, error, test_s, item.config.getoption("--autograd-doctor-patch-limit"))
    except Exception:
        internal_error()
        return ""


def test_exception(item, call) -> BaseException | None:
    """The exception the test failed with. A unittest.TestCase catches its own: pytest's
    unittest support keeps it on the item and moves it to `call` after this hook's start."""
    if call.excinfo is not None:
        return call.excinfo.value
    return kept_exception(item)


def kept_exception(item) -> BaseException | None:
    """The exception a unittest.TestCase test failed with, which pytest keeps on the item."""
    kept = getattr(item, "_excinfo", None)
    return kept[0].value if kept else None


def explained(item, doctor, error: BaseException | None) -> list:
    """The test's diagnoses (the full mode's when a second run found the save line); their
    codes and locations become the test's properties (`--junitxml` writes them)."""
    try:
        diagnoses = diagnoses_for(doctor, error)
        if error is not None:
            complete_with_full_mode(item, doctor, error)
            diagnoses = collected(doctor, error)
        for diagnosis in diagnoses:
            if error is None and caught_by_the_test(diagnosis):
                continue
            item.user_properties.append(("autograd_doctor_code", diagnosis.code))
            if diagnosis.primary is not None:
                item.user_properties.append(
                    ("autograd_doctor_location", f"{diagnosis.primary.file}:{diagnosis.primary.line}"))
        return diagnoses
    except Exception:
        internal_error()
        return []


def caught_by_the_test(diagnosis) -> bool:
    """In a test that passed, an error's diagnosis explains an exception that the test caught
    (`pytest.raises`, a `try`): what it expected, or a fallback it chose. It is shown with the
    passed test's output (`-rP`) under its own heading, never among the test's findings: the
    codes and locations in `--junitxml` are of what went wrong. A warning (a silent bug) stays
    a finding."""
    return diagnosis.severity == "error"


def caught_heading(count: int) -> str:
    """Above the explanations of the errors that a passing test caught."""
    what = "the error" if count == 1 else f"the {count} errors"
    return f"note: the test passed; it caught {what} explained below"


def remove_report_notes(error: BaseException) -> None:
    """Take the report notes that `attach` added off the test's exception: pytest would
    print them in its traceback, and the section already shows the report."""
    try:
        notes = getattr(error, "__notes__", None)
        if notes:
            kept = [note for note in notes if not (isinstance(note, str) and note.startswith(NOTE_START))]
            if kept:
                error.__notes__ = kept
            else:
                del error.__notes__
        elif sys.version_info < (3, 11) and error.args and isinstance(error.args[0], str):
            error.args = (error.args[0].split("\n\n" + NOTE_START)[0],) + error.args[1:]
    except Exception:
        internal_error()


def summary_line_only(report) -> None:
    """pytest's short test summary quotes the crash message, and whole when the CI
    variable is set: for the doctor's own error that would print its report a second
    time. The summary keeps the message's first line (the traceback keeps it all)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and isinstance(crash.message, str):
        crash.message = crash.message.split("\n", 1)[0]


def add_report(report, diagnoses: list, error: BaseException | None, patch: str = "") -> None:
    """The report as a section of the failure (printed after the traceback, also in
    `--junitxml`), or of the test's report when it passed (printed with `-rP`); then the
    checked patch of --autograd-doctor-patch, if any."""
    from autograd_doctor.doctor import AutogradDoctorError
    from autograd_doctor.report.text import render_report

    if isinstance(error, AutogradDoctorError):
        # Raised by the doctor itself (strict mode): its message is its report.
        diagnoses = [d for d in diagnoses if d is not error.diagnosis]
        summary_line_only(report)
    if not diagnoses and not patch:
        return
    if error is None:  # a passing test: its findings, then the errors it caught (and no patch)
        findings = [d for d in diagnoses if not caught_by_the_test(d)]
        caught = [d for d in diagnoses if caught_by_the_test(d)]
        parts = [render_report(findings) if findings else "",
                 caught_heading(len(caught)) + "\n\n" + render_report(caught) if caught else ""]
    else:
        parts = [render_report(diagnoses) if diagnoses else "", patch]
    text = "\n".join(part.rstrip("\n") for part in parts if part)
    if report.failed and hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection(SECTION, text)
    else:
        report.sections.append((SECTION, text))
