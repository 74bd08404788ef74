"""The pytest plugin in a real pytest run (pytester, in a subprocess)."""

from __future__ import annotations

import textwrap

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
    def test_strict_stops_at_the_write():
        h = torch.exp(torch.randn(4, requires_grad=True))
        h.add_(1)  # WRITE-STRICT
        h.sum().backward()
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
    unmarked = output.split("_ test_unmarked _", 1)[1].split("_ test_strict_stops_at_the_write _", 1)[0]
    assert "autograd-doctor" not in unmarked  # plain PyTorch error, no doctor
    strict = output.split("_ test_strict_stops_at_the_write _", 1)[1]
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
