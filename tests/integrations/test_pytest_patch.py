"""`pytest --autograd-doctor-patch` in a real pytest run: a failing test's help checked on a copy
(the test run again under the oracle and changed) and printed as a patch with its verdict."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from programs import line_of

USER_TESTS = textwrap.dedent("""\
    import unittest

    import torch

    from helpers import squash


    def test_training_step():
        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = torch.sigmoid(x)
        y[1] = 2.0  # WRITE
        y.sum().backward()
        # The gradient the test means: sigmoid's, with the overwritten entry's cut.
        s = torch.sigmoid(torch.tensor([0.5, -1.0, 2.0]))
        assert torch.equal(x.grad, (s * (1 - s)).index_fill(0, torch.tensor([1]), 0.0))


    def test_leaf_written():
        w = torch.ones(3, requires_grad=True)
        w.add_(1)  # LEAF
        (w * 2).sum().backward()


    def test_two_writes():
        w = torch.ones(3, requires_grad=True)
        h = w.sigmoid()
        h.mul_(2)  # FIRST
        (h * w).sum().backward()
        g = w.exp()
        g.add_(1)  # SECOND
        g.sum().backward()


    def test_written_views_of_the_summed_tensor():
        x = torch.ones(4, requires_grad=True)
        h = torch.exp(x)
        u = h[:2]
        u *= 2  # VIEW
        h.sum().backward()


    def test_loss_made_a_number():
        x = torch.ones(3, requires_grad=True)
        value = (x * 2).sum().item()  # NUMBER
        torch.tensor(value).backward()


    def test_in_helper():
        x = torch.linspace(-1.0, 1.0, 3, requires_grad=True)
        squash(x).sum().backward()


    class StepTest(unittest.TestCase):
        def test_step(self):
            w = torch.linspace(-1.0, 1.0, 4, requires_grad=True)
            h = torch.tanh(w)
            h.mul_(0.5)  # UNITTEST
            h.sum().backward()


    def test_passes():
        x = torch.randn(3, requires_grad=True)
        torch.sigmoid(x).sum().backward()
        assert x.grad is not None
""")

HELPERS = textwrap.dedent("""\
    import torch


    def squash(x):
        y = torch.sigmoid(x)
        y.mul_(2)  # HELPER
        return y
""")


def run_pytest(folder, *args: str) -> str:
    completed = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                               cwd=str(folder), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=900)
    return completed.stdout


def sections_of(output: str) -> dict[str, str]:
    """Each failing test's `autograd-doctor` section, by test name."""
    sections = {}
    for block in output.split("\n___")[1:]:
        name = block.split("\n", 1)[0].strip(" _")
        if "- autograd-doctor -" in block:
            section = block.split("- autograd-doctor -", 1)[1].split("\n", 1)[1].split("\n====", 1)[0]
            sections[name] = section.rstrip("\n") + "\n"
    return sections


def files_of(folder) -> dict[str, str]:
    return {name: (folder / name).read_text() for name in sorted(os.listdir(folder))}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("project")
    (folder / "test_user.py").write_text(USER_TESTS)
    (folder / "helpers.py").write_text(HELPERS)
    before = files_of(folder)
    output = run_pytest(folder, "--autograd-doctor-patch", "--autograd-doctor-patch-limit=600")
    return folder, before, output


def test_saved_tensor_test_gets_a_verified_patch(project):
    folder, _, output = project
    section = sections_of(output)["test_training_step"]
    write = line_of(USER_TESTS, "WRITE")
    assert "error[AD101]" in section
    assert ("autograd-doctor: the help, checked on a copy of test_user.py (test_user.py::test_training_step ran "
            "again under the oracle and changed; no file was written):\n") in section
    assert (f"--- a/test_user.py\n+++ b/test_user.py\n@@ -{write - 3},7 +{write - 3},7 @@\n"
            " def test_training_step():\n"
            "     x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\n"
            "     y = torch.sigmoid(x)\n"
            "-    y[1] = 2.0  # WRITE\n"
            "+    y = y.index_fill(0, torch.tensor([1]), 2.0)  # WRITE\n"
            "     y.sum().backward()\n") in section
    assert ("\nverified: forward values, gradients and parameters equal the oracle's (bitwise; oracle: the original "
            "program run with each tensor autograd saved copied before it is written in place)\n") in section
    assert output.count("--- a/test_user.py") == 4  # once per patch of this file: no duplicate


def test_the_patch_applied_makes_the_test_pass_with_the_reference_gradient(project, tmp_path):
    """The printed change, applied, gives the test's own reference gradient (its assert) and
    passes without the doctor."""
    folder, _, output = project
    section = sections_of(output)["test_training_step"]
    removed = [line[1:] for line in section.splitlines() if line.startswith("-    ")]
    added = [line[1:] for line in section.splitlines() if line.startswith("+    ")]
    assert len(removed) == len(added) == 1
    changed = USER_TESTS.replace(removed[0] + "\n", added[0] + "\n")
    (tmp_path / "test_user.py").write_text(changed)
    (tmp_path / "helpers.py").write_text(HELPERS)
    result = run_pytest(tmp_path, "-p", "no:autograd_doctor", "test_user.py::test_training_step")
    assert "1 passed" in result, result


def test_no_oracle_says_unverified_and_why(project):
    section = sections_of(project[2])["test_leaf_written"]
    assert "error[AD102]" in section
    assert "+    with torch.no_grad():\n+        w.add_(1)  # LEAF\n" in section
    assert ("\nunverified: the changed program runs and its forward values up to the failing backward() equal the "
            "original's (bitwise); no oracle gives the gradients it meant: the original program run with each "
            "tensor autograd saved copied before it is written in place fails too (RuntimeError: a leaf Variable that "
            "requires grad is being used in an in-place operation.)\n") in section


def test_a_help_that_changes_the_values_is_not_verified_and_not_offered_first(project):
    """`u = u * 2` leaves `h` unwritten, so the changed test hands backward() another sum: no diff
    is offered, the verdict says why, and the help gets a note saying so."""
    section = sections_of(project[2])["test_written_views_of_the_summed_tensor"]
    line = line_of(USER_TESTS, "VIEW")
    assert "--- a/" not in section
    assert section.endswith("\nnot verified: the changed program computes other values: the values handed to "
                            "backward() call 1 differ from the original run's\n")
    assert (f"= note: autograd-doctor tried the help at line {line} on a copy: not verified: the changed program "
            "computes other values") in section


def test_an_advice_only_help_gets_no_patch_and_nothing_runs_again(project):
    section = sections_of(project[2])["test_loss_made_a_number"]
    assert "error[AD301]" in section and "ran again under the oracle" not in section
    assert section.endswith("\nautograd-doctor: no patch: the help is advice, not a change autograd-doctor can "
                            f"apply; look at line {line_of(USER_TESTS, 'NUMBER')} (AD301)\n")


def test_the_next_write_of_the_same_kind_is_changed_too(project):
    section = sections_of(project[2])["test_two_writes"]
    assert "-    h.mul_(2)  # FIRST\n+    h = h.mul(2)  # FIRST\n" in section
    assert "-    g.add_(1)  # SECOND\n+    g = g.add(1)  # SECOND\n" in section
    assert "\nverified: forward values, gradients and parameters equal the oracle's" in section


def test_a_help_in_a_module_the_test_imports_is_checked_in_that_module(project):
    section = sections_of(project[2])["test_in_helper"]
    assert "checked on a copy of helpers.py (test_user.py::test_in_helper ran again" in section
    assert "--- a/helpers.py\n+++ b/helpers.py\n" in section
    assert "-    y.mul_(2)  # HELPER\n+    y = y.mul(2)  # HELPER\n" in section
    assert "\nverified: " in section


def test_a_unittest_case_is_checked_with_the_exception_unittest_caught(project):
    section = sections_of(project[2])["StepTest.test_step"]
    assert "-        h.mul_(0.5)  # UNITTEST\n+        h = h.mul(0.5)  # UNITTEST\n" in section
    assert "\nverified: forward values, gradients and parameters equal the oracle's" in section


def test_a_passing_test_prints_nothing_and_no_file_is_written(project):
    folder, before, output = project
    assert "7 failed, 1 passed" in output
    assert "test_passes" not in sections_of(output)
    assert files_of(folder) == before  # no copy, no cache, no bytecode left in the project


def test_the_traceback_is_the_one_without_the_doctor(project):
    folder, _, output = project
    plain = run_pytest(folder, "-p", "no:autograd_doctor")
    for name in ("test_training_step", "test_leaf_written"):
        with_doctor = output.split(f"_ {name} _", 1)[1].split("- autograd-doctor -", 1)[0]
        without = plain.split(f"_ {name} _", 1)[1].split("\n___", 1)[0].split("\n====", 1)[0]
        assert with_doctor.rstrip("-\n ") == without.rstrip("-\n ")
    assert "autograd_doctor/" not in output


def test_the_check_is_bounded_by_its_time_limit_and_the_ini_setting_turns_it_on(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nautograd_doctor_patch = true\n")
    output = run_pytest(tmp_path, "--autograd-doctor-patch-limit=0.01", "test_user.py::test_training_step")
    section = sections_of(output)["test_training_step"]
    assert "\nnot verified: the original program could not be run again to compare with\n" in section
    assert ("autograd-doctor: the check stopped at its time limit of 0.01 s (--autograd-doctor-patch-limit SECONDS "
            "changes it)") in section
