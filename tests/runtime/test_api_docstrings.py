"""The examples in the run-time API's docstrings run and show what they say."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["autograd_doctor.doctor", "autograd_doctor.analysis.copies"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
