"""A bug of ours in one rule, on one file, must not end the lint of a repository: that file gets
an ADL000 finding that says the linter failed on it (and how to see why), the other files are
checked as usual. Under AUTOGRAD_DOCTOR_DEBUG (the tests' conftest sets it) the failure raises, so
that the suite sees it. The failing rule is ours, made to fail on purpose: a rule that raised on
a real file (ADL031 on `self.eval()` in a method called without arguments) ended a whole run."""

from __future__ import annotations

import pytest

from autograd_doctor.lint import rules
from autograd_doctor.lint.engine import lint_source

BUGGY = "import torch\ny = torch.sigmoid(torch.randn(3, requires_grad=True))\ny[0] = 0\n"


def _failing_check(checker):
    if "FAIL_HERE" in checker.source:
        raise KeyError("a bug of ours")


@pytest.fixture
def a_rule_that_fails(monkeypatch):
    monkeypatch.setattr(rules, "_FILE_CHECKS", rules._FILE_CHECKS + [("ADL001", _failing_check)])


def test_the_file_gets_an_adl000_and_the_other_files_are_checked(a_rule_that_fails, monkeypatch):
    monkeypatch.delenv("AUTOGRAD_DOCTOR_DEBUG", raising=False)
    failed = lint_source("# FAIL_HERE\n" + BUGGY, "bad.py")
    assert [f.code for f in failed] == ["ADL000"]
    assert "the linter failed on this file (KeyError: 'a bug of ours')" in failed[0].message
    assert "AUTOGRAD_DOCTOR_DEBUG=1" in failed[0].message
    assert [f.code for f in lint_source(BUGGY, "good.py")] == ["ADL001"]


def test_under_debug_the_failure_raises(a_rule_that_fails, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DOCTOR_DEBUG", "1")
    with pytest.raises(KeyError):
        lint_source("# FAIL_HERE\n" + BUGGY, "bad.py")
