"""The pytest plugin in a real pytest run (pytester, in a subprocess)."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from xml.etree import ElementTree

import pytest

from programs import line_of

pytest_plugins = ["pytester"]

FAILING_TESTS = textwrap.dedent("""\
    import pytest
    import torch


    def test_sigmoid_output_written():
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        y[1] = 2.0  # WRITE
        y.sum().backward()


    def test_clean_step():
        x = torch.randn(3, requires_grad=True)
        torch.sigmoid(x).sum().backward()
        assert x.grad is not None
""")

MARKED_TESTS = textwrap.dedent("""\
    import pytest
    import torch


    @pytest.mark.autograd_doctor
    def test_marked():
        h = torch.tanh(torch.randn(4, requires_grad=True))
        h.mul_(0.5)  # WRITE-MARKED
        h.sum().backward()


    def test_unmarked():
        h = torch.exp(torch.randn(4, requires_grad=True))
        h += 1
        h.sum().backward()


    @pytest.mark.autograd_doctor(strict=True)
    def test_strict_stops_at_backward():
        h = torch.exp(torch.randn(4, requires_grad=True))
        h.add_(1)  # WRITE-STRICT
        h.sum().backward()  # BACKWARD-STRICT
""")


def test_option_puts_the_diagnosis_in_the_failure_report(pytester):
    pytester.makepyfile(test_training=FAILING_TESTS)
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    output = result.stdout.str()
    section = output.split("autograd-doctor -----", 1)[1]
    assert "error[AD101]" in section
    assert f"test_training.py:{line_of(FAILING_TESTS, 'WRITE')}:" in section  # the culprit line
    assert "y[1] = 2.0" in section and "modified here" in section
    # The default (light) mode does not record saves: the failed test ran once more under
    # the full mode, whose report names the line that saved the tensor.
    assert "y = torch.sigmoid(x)" in section and "saved here" in section
    assert "ran the test a second time under the full mode" in section
    assert "help: fill the entry out of place" in section
    assert "y = y.index_fill(0, torch.tensor([1]), 2.0)" in section
    # Only the failing test gets a section.
    assert output.count("autograd-doctor -----") == 1


def test_no_rerun_keeps_the_light_report(pytester):
    pytester.makepyfile(test_training=FAILING_TESTS)
    result = pytester.runpytest_subprocess("--autograd-doctor", "--autograd-doctor-no-rerun", "-p",
                                           "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    section = result.stdout.str().split("autograd-doctor -----", 1)[1]
    assert "error[AD101]" in section and "y[1] = 2.0" in section
    assert "found by the default (light) mode" in section and "saved here" not in section
    assert "second time" not in section


def test_option_in_full_mode_names_the_save_line(pytester, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DOCTOR_MODE", "full")
    pytester.makepyfile(test_training=FAILING_TESTS)
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    section = result.stdout.str().split("autograd-doctor -----", 1)[1]
    assert "error[AD101]" in section and "saved here" in section


def test_marker_enables_the_doctor_for_one_test(pytester):
    pytester.makepyfile(test_marked=MARKED_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(failed=3)
    output = result.stdout.str()
    marked = output.split("_ test_marked _", 1)[1].split("_ test_unmarked _", 1)[0]
    assert "error[AD101]" in marked and "h.mul_(0.5)" in marked
    assert f"test_marked.py:{line_of(MARKED_TESTS, 'WRITE-MARKED')}:" in marked
    assert "help:" in marked
    unmarked = output.split("_ test_unmarked _", 1)[1].split("_ test_strict_stops_at_backward _", 1)[0]
    assert "autograd-doctor" not in unmarked  # plain PyTorch error, no doctor
    strict = output.split("_ test_strict_stops_at_backward _", 1)[1]
    assert "AutogradDoctorError" in strict and f"test_marked.py:{line_of(MARKED_TESTS, 'WRITE-STRICT')}:" in strict


def test_ini_setting_turns_it_on(pytester):
    pytester.makeini("[pytest]\nautograd_doctor = true\n")
    pytester.makepyfile(test_training=FAILING_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    assert "error[AD101]" in result.stdout.str().split("autograd-doctor -----", 1)[1]


def test_report_shows_no_pytest_frames(pytester):
    """pytest's own frames (its __main__, _pytest, pluggy) are never shown as the user's code."""
    pytester.makepyfile(test_frames="""
        import torch

        def test_step():
            x = torch.randn(3, requires_grad=True)
            y = torch.sigmoid(x)
            y[1] = 2.0
            y.sum().backward()
    """)
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider")
    output = result.stdout.str()
    assert "error[AD101]" in output
    assert "called from" not in output
    assert "site-packages" not in output.split("autograd-doctor ---")[1].split("short test summary")[0]


# A test file whose output is the same in every run: fixed seeds, and a second failing
# test that prints what torch's random generator gives after the first one.
SEEDED_TESTS = textwrap.dedent("""\
    import os

    import pytest
    import torch

    torch.manual_seed(0)


    @pytest.fixture
    def width():
        return 3


    def test_sigmoid_output_written(width):
        x = torch.randn(width, requires_grad=True)
        y = torch.sigmoid(x)
        y[1] = 2.0  # WRITE
        y.sum().backward()


    def test_next_random_value():
        value = torch.rand(1).item()
        assert value < 0, "the generator goes on as without the doctor"


    @pytest.mark.autograd_doctor(strict=True)
    def test_strict_stops_at_backward():
        h = torch.exp(torch.ones(4, requires_grad=True))
        h.add_(1)  # WRITE-STRICT
        h.sum().backward()  # BACKWARD-STRICT
""")

SEPARATOR = re.compile(r"^[-=_]+ .* [-=_]+$")


def without_doctor_section(output: str) -> str:
    """The output without the `autograd-doctor` section, the session's duration and object addresses."""
    kept, in_section = [], False
    for line in output.splitlines():
        if SEPARATOR.match(line):
            in_section = line.strip("-= ") == "autograd-doctor"
            if in_section:
                continue
        if not in_section:
            line = re.sub(r" in [0-9.]+s( \(.*\))? =+$", "", line)
            kept.append(re.sub(r" at 0x[0-9a-f]+>", " at 0x...>", line))  # object addresses
    return "\n".join(kept)


def pytest_console_script() -> str:
    """The `pytest` command of this environment (not `python -m pytest`)."""
    script = os.path.join(os.path.dirname(sys.executable), "pytest")
    if not os.path.exists(script):
        pytest.skip("no pytest console script next to this Python")
    return script


def test_output_equals_plain_pytest_except_the_report(pytester):
    """With the `pytest` command: the same tracebacks (no frame of the doctor), the same
    messages and the same random numbers after a failed test as without the doctor; the
    report once, in its section, with the save line that the second run found; no frame
    of pytest's or of its console script shown as the user's code."""
    pytester.makepyfile(test_training=SEEDED_TESTS)
    script = pytest_console_script()
    plain = pytester.run(script, "-p", "no:cacheprovider", "-k", "not strict")
    doctor = pytester.run(script, "-p", "no:cacheprovider", "-k", "not strict", "--autograd-doctor")
    plain.assert_outcomes(failed=2, deselected=1)
    doctor.assert_outcomes(failed=2, deselected=1)
    plain_output, doctor_output = plain.stdout.str(), doctor.stdout.str()
    assert without_doctor_section(doctor_output) == without_doctor_section(plain_output)
    assert "autograd_doctor" not in doctor_output  # no file of ours (the header says autograd-doctor)
    # The report once: the write's line is in pytest's traceback and in the report.
    assert doctor_output.count("error[AD101]") == 1
    assert doctor_output.count("y[1] = 2.0  # WRITE") == plain_output.count("y[1] = 2.0  # WRITE") + 1
    section = doctor_output.split("- autograd-doctor -", 1)[1]
    assert "saved here" in section and "modified here" in section
    assert "ran the test a second time under the full mode" in section
    assert "called from" not in section and "console_main" not in section and "/bin/" not in section


@pytest.mark.parametrize("ci", ["", "true"], ids=["terminal", "CI"])
def test_strict_error_ends_at_the_users_backward(pytester, monkeypatch, ci):
    """Strict decides at backward(), before the engine runs: the traceback shows the user's
    backward() line as the last entry and no source of ours; the message names the write's
    line, the notes its call stack. With CI set, pytest's short summary quotes whole
    messages: it still quotes only the first line."""
    monkeypatch.setenv("CI", ci) if ci else monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_training=SEEDED_TESTS)
    result = pytester.run(pytest_console_script(), "-p", "no:cacheprovider", "-k", "strict")
    result.assert_outcomes(failed=1, deselected=2)
    output = result.stdout.str()
    last_entry = r"^>\s+h\.sum\(\)\.backward\(\)  # BACKWARD-STRICT\n(\s+\^+\n)?E\s+autograd_doctor\.AutogradDoctorError: "
    assert re.search(last_entry, output, re.M)
    assert f"test_training.py:{line_of(SEEDED_TESTS, 'BACKWARD-STRICT')}: AutogradDoctorError" in output
    assert f"test_training.py:{line_of(SEEDED_TESTS, 'WRITE-STRICT')}:" in output  # the write, in the report
    assert f"line {line_of(SEEDED_TESTS, 'WRITE-STRICT')}, in test_strict_stops_at_backward" in output  # its stack
    assert "autograd_doctor/" not in output and "def " not in output.split("test_strict_stops_at_backward():")[1]
    assert output.count("error[AD101]") == 1  # the error's message is the report: no section repeats it
    assert "- autograd-doctor -" not in output
    assert ("FAILED test_training.py::test_strict_stops_at_backward - autograd_doctor.AutogradDoctorError: "
            "a tensor that autograd saved was modified in place before backward()\n") in output or not ci


def test_junitxml_has_the_codes_and_locations(pytester):
    pytester.makepyfile(test_training=SEEDED_TESTS)
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider", "-k", "not strict",
                                           "--junitxml=report.xml")
    result.assert_outcomes(failed=2, deselected=1)
    cases = {case.get("name"): case for case in ElementTree.parse(pytester.path / "report.xml").iter("testcase")}
    properties = [(p.get("name"), p.get("value")) for p in cases["test_sigmoid_output_written"].iter("property")]
    assert properties == [
        ("autograd_doctor_code", "AD101"),
        ("autograd_doctor_location", f"{pytester.path / 'test_training.py'}:{line_of(SEEDED_TESTS, 'WRITE')}"),
    ]
    assert list(cases["test_next_random_value"].iter("property")) == []  # nothing found: nothing written
    # The failure's text is pytest's, with the report once.
    failure = cases["test_sigmoid_output_written"].find("failure").text
    assert failure.count("error[AD101]") == 1 and "saved here" in failure


def test_second_run_is_in_the_same_process_with_fresh_fixtures(pytester):
    """The failed test runs again in pytest's own process (no new interpreter: a tiny test
    costs milliseconds, not seconds), its function fixtures set up afresh and torn down
    again, its prints not shown twice; the tests after it see what they see without the doctor."""
    pytester.makepyfile(test_rerun=textwrap.dedent("""\
        import os

        import pytest
        import torch

        EVENTS = []


        @pytest.fixture
        def model():
            EVENTS.append(("set up", os.getpid()))
            yield torch.nn.Linear(3, 3)
            EVENTS.append(("torn down", os.getpid()))


        def test_fails(model):
            print("printed by the test")
            y = torch.sigmoid(model(torch.ones(2, 3)))
            y[0, 0] = 1.0
            y.sum().backward()


        def test_after():
            pid = os.getpid()
            assert EVENTS == [("set up", pid), ("torn down", pid)] * 2
    """))
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    output = result.stdout.str()
    assert "saved here" in output and "ran the test a second time under the full mode" in output
    # Same process: test_after sees both set-ups under one pid. The time is printed, not
    # asserted: a loaded machine makes any bound flaky.
    assert re.search(r"it took \d+\.\d s", output)
    assert output.split("Captured stdout call")[1].count("printed by the test") == 1


def test_unittest_case_traceback_as_without_the_doctor(pytester):
    """unittest catches a TestCase's exception itself; pytest's traceback of it has no frame
    of the doctor either, and the report comes once, in its section (a TestCase is not
    run a second time: unittest would record that run's failure as the test's)."""
    source = textwrap.dedent("""\
        import unittest

        import torch


        class Step(unittest.TestCase):
            def test_step(self):
                y = torch.sigmoid(torch.ones(3, requires_grad=True))
                y[1] = 2.0  # WRITE
                y.sum().backward()
    """)
    pytester.makepyfile(test_case=source)
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    doctor = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--autograd-doctor")
    plain.assert_outcomes(failed=1)
    doctor.assert_outcomes(failed=1)
    output = doctor.stdout.str()
    assert without_doctor_section(output) == without_doctor_section(plain.stdout.str())
    assert output.count("error[AD101]") == 1 and f"test_case.py:{line_of(source, 'WRITE')}:" in output
    assert "second time" not in output


CAUGHT_TESTS = textwrap.dedent("""\
    import pytest
    import torch


    def test_expects_the_error():
        h = torch.exp(torch.randn(4, requires_grad=True))
        h.add_(1)  # WRITE-CAUGHT
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            h.sum().backward()
""")


def test_a_passing_tests_caught_error_is_explained_but_not_a_finding(pytester):
    # A test that expects autograd's error passes under the doctor as without it. The error's
    # explanation is shown with the passed test's output, under a heading that says it was
    # caught; --junitxml's properties hold only what went wrong, and nothing did.
    pytester.makepyfile(test_caught=CAUGHT_TESTS)
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider", "-rP",
                                           "--junitxml=report.xml")
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    heading = output.index("note: the test passed; it caught the error explained below")
    report = output.index("error[AD101]")
    assert heading < report
    assert f"test_caught.py:{line_of(CAUGHT_TESTS, 'WRITE-CAUGHT')}:5" in output
    cases = {case.get("name"): case for case in ElementTree.parse(pytester.path / "report.xml").iter("testcase")}
    assert list(cases["test_expects_the_error"].iter("property")) == []
