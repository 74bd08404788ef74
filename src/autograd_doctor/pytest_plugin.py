"""pytest plugin: `pytest --autograd-doctor` runs each test under `watch()`.

The diagnoses of a failing test are added to its failure report as a section
("autograd-doctor"). `@pytest.mark.autograd_doctor` enables it for one test, with
optional watch() options: `@pytest.mark.autograd_doctor(strict=True)`. The ini
setting `autograd_doctor = true` turns it on for a whole project.

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

import pytest

SECTION = "autograd-doctor"


def pytest_addoption(parser):
    group = parser.getgroup("autograd-doctor")
    group.addoption("--autograd-doctor", action="store_true", default=False,
                    help="run every test under autograd_doctor.watch() and explain autograd failures")
    group.addoption("--autograd-doctor-strict", action="store_true", default=False,
                    help="like --autograd-doctor, with watch(strict=True)")
    group.addoption("--autograd-doctor-no-rerun", action="store_true", default=False,
                    help="do not re-run a failed test under the full mode when the report lacks the line that "
                         "saved the modified tensor")
    group.addoption("--autograd-doctor-rerun-limit", type=float, default=None, metavar="SECONDS",
                    help="the most a failed test's second run may take (default: the smaller of 60 s and twice "
                         "the first run's time; 0 never re-runs; also AUTOGRAD_DOCTOR_RERUN_LIMIT)")
    parser.addini("autograd_doctor", type="bool", default=False,
                  help="run every test under autograd_doctor.watch() (like --autograd-doctor)")


def pytest_configure(config):
    limit = config.getoption("--autograd-doctor-rerun-limit", None)
    if limit is not None and not limit >= 0:
        raise pytest.UsageError(f"--autograd-doctor-rerun-limit must be 0 or more seconds, not {limit}")
    config.addinivalue_line(
        "markers", "autograd_doctor(**options): run this test under autograd_doctor.watch(**options)")


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
    if config.getoption("--autograd-doctor") or config.getini("autograd_doctor"):
        return {}
    return None


def pytest_collection_finish(session):
    # What a failed test's second run costs before the test itself: pytest's start and the
    # collection (see complete_with_full_mode).
    from autograd_doctor.rerun import process_age_s

    session.config._autograd_doctor_start_s = process_age_s()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    options = watch_options_for(item)
    if options is None:
        yield
        return
    from autograd_doctor.doctor import watch

    with watch(**options) as doctor:
        item._autograd_doctor = doctor
        yield


def diagnoses_for(doctor, error: BaseException | None) -> list:
    """What the doctor found during a test, plus what it attached to the test's exception."""
    if error is not None:
        from autograd_doctor.compiled import explain_from_traceback
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


def complete_with_full_mode(item, doctor, error: BaseException, diagnoses: list, elapsed_s: float) -> list | None:
    """The default (light) mode found the write but not the save line: run this one test
    again, in a child pytest under the full mode (autograd_doctor.rerun); the diagnoses
    then reported, or None when nothing was re-run. In that child, `diagnoses` are handed
    to the parent."""
    from autograd_doctor import rerun

    if rerun.is_child():
        rerun.save_for_parent(diagnoses)
        return None
    if item.config.getoption("--autograd-doctor-no-rerun"):
        return None
    light = rerun.wants_rerun(doctor, error)
    if light is None:
        return None
    config = item.config
    # The node id is relative to the root directory; the ini file (and its setting) is
    # found there again. A marker comes back with the test itself.
    command = [sys.executable, "-m", "pytest", item.nodeid, "-q", "-p", "no:cacheprovider",
               "--rootdir", str(config.rootpath)]
    if config.getoption("--autograd-doctor"):
        command.append("--autograd-doctor")
    # The child starts pytest and collects again before it runs the test.
    first_run_s = elapsed_s + (getattr(config, "_autograd_doctor_start_s", None) or 0.0)
    rerun.complete_with_full_mode(doctor, error, light, command, first_run_s, what="the test",
                                  switch="--autograd-doctor-no-rerun", cwd=str(config.rootpath),
                                  limit_s=config.getoption("--autograd-doctor-rerun-limit"),
                                  full_hint=f"`AUTOGRAD_DOCTOR_MODE=full pytest --autograd-doctor {item.nodeid}`",
                                  limit_option="--autograd-doctor-rerun-limit")
    return collected(doctor, error)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when != "call":
        return
    doctor = item.__dict__.pop("_autograd_doctor", None)  # do not keep it past the test
    if doctor is None:
        return
    report = outcome.get_result()
    try:
        from autograd_doctor.report.text import render_report

        error = call.excinfo.value if call.excinfo is not None else None
        diagnoses = diagnoses_for(doctor, error)
        if error is not None:
            diagnoses = complete_with_full_mode(item, doctor, error, diagnoses, call.duration) or diagnoses
        if diagnoses:
            report.sections.append((SECTION, render_report(diagnoses)))
            report.user_properties.append(("autograd_doctor", [d.code for d in diagnoses]))
    except Exception:
        from autograd_doctor.doctor import internal_error

        internal_error()
