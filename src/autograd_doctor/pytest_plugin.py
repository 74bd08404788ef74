"""pytest plugin: `pytest --autograd-doctor` runs each test under `watch()`.

The diagnoses of a failing test are added to its failure report as a section
("autograd-doctor"). `@pytest.mark.autograd_doctor` enables it for one test, with
optional watch() options: `@pytest.mark.autograd_doctor(strict=True)`.
"""

from __future__ import annotations

import pytest

from autograd_doctor.doctor import diagnoses_of, watch
from autograd_doctor.report.text import render_report


def pytest_addoption(parser):
    group = parser.getgroup("autograd-doctor")
    group.addoption("--autograd-doctor", action="store_true", default=False,
                    help="run every test under autograd_doctor.watch() and explain autograd failures")
    group.addoption("--autograd-doctor-strict", action="store_true", default=False,
                    help="like --autograd-doctor, with watch(strict=True)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "autograd_doctor(**options): run this test under autograd_doctor.watch(**options)")


def _options_for(item) -> dict | None:
    marker = item.get_closest_marker("autograd_doctor")
    if marker is not None:
        return dict(marker.kwargs)
    if item.config.getoption("--autograd-doctor-strict"):
        return {"strict": True}
    if item.config.getoption("--autograd-doctor"):
        return {}
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    options = _options_for(item)
    if options is None:
        yield
        return
    with watch(**options) as doctor:
        item._autograd_doctor = doctor
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    doctor = getattr(item, "_autograd_doctor", None)
    if doctor is None or call.when != "call":
        return
    diagnoses = list(doctor.diagnoses)
    if call.excinfo is not None:
        for diagnosis in diagnoses_of(call.excinfo.value):
            if diagnosis not in diagnoses:
                diagnoses.append(diagnosis)
    if diagnoses:
        report.sections.append(("autograd-doctor", render_report(diagnoses)))
