"""Cheaper lint work with the same findings (docs/lint.md, "Performance", stop 42).

- An `if` test is walked for a debug or anomaly word only when its lines could hold one (the
  words, an escaped string, or more than one string literal); ADL013 reads the result.
- `__init__`'s simulation of feature flags (fallbacks.feature_flags) walks a statement for the
  attributes it assigns only while some flag is True: any other is settled later or stays not True.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fallbacks import feature_flags


def _adl013(test: str) -> list[int]:
    source = ("import os, torch\nargs = None\ncfg = {}\n# debug runs below\n"
              f"if {test}:\n    torch.autograd.set_detect_anomaly(True)\n")
    return [f.line for f in lint_source(source, "guards.py", Selection(select=("ALL",))) if f.code == "ADL013"]


@pytest.mark.parametrize("test", [
    "args.debug",
    "cfg['Anomaly']",
    'os.environ.get("AUTOGRAD_" "DEBUG")',  # two literals joined: the walk decides
    'os.environ.get("\\x44EBUG")',  # an escaped string: the walk decides
    "args.\\\n        debug",
])
def test_a_debug_guard_is_still_found(test):
    assert _adl013(test) == []


@pytest.mark.parametrize("test", ["args.verbose", "cfg['mode'] == 'train'", 'os.environ.get("X")'])
def test_a_test_without_a_debug_word_is_no_guard(test):
    assert _adl013(test) == [6]


def _qualname(node):
    return node.id if isinstance(node, ast.Name) else None


FLAGS = textwrap.dedent("""
    import torch

    class MadeUnknown:
        def __init__(self, cond):
            self.fused = hasattr(torch, "_foreach_add_")
            for i in range(2):
                self.fused = i

    class SetAfterTheLoop:
        def __init__(self, cond):
            for i in range(2):
                self.plain = i
            if cond:
                self.plain = 0
            self.plain = True

    class UnknownInABranch:
        def __init__(self, cond):
            if cond:
                self.other = 1
            self.fast = hasattr(torch, "compile")
            if cond:
                self.fast = False
""")


def test_feature_flags_keep_their_meaning():
    assert feature_flags(ast.parse(FLAGS), _qualname) == frozenset({("SetAfterTheLoop", "plain")})
