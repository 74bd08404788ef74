"""Buggy programs for the integration tests, and where their interesting lines are."""

from __future__ import annotations

import os
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = sys.executable
ARTIFACTS = os.path.join(REPO, "test-artifacts")

BUGGY_PROGRAM = textwrap.dedent("""\
    import torch

    weights = torch.randn(3, requires_grad=True)
    scores = torch.sigmoid(weights * 2)  # SAVE
    scores[1] = 2.0  # WRITE
    scores.sum().backward()  # BACKWARD
""")


def line_of(source: str, marker: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if f"# {marker}" in line:
            return number
    raise AssertionError(f"no line marked {marker}")


def artifact_path(name: str) -> str:
    os.makedirs(ARTIFACTS, exist_ok=True)
    return os.path.join(ARTIFACTS, name)
