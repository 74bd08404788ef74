"""The small examples in the integration modules' docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", [
    "autograd_doctor.analysis.graph_snapshot", "autograd_doctor.report.graph", "autograd_doctor.report.html",
    "autograd_doctor.report.outputs",
    "autograd_doctor.integrations.ipython",
])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
