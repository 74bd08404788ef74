"""Fixtures of the integration tests."""

from __future__ import annotations

import pytest

from programs import BUGGY_PROGRAM


@pytest.fixture
def buggy_script(tmp_path):
    """A script whose backward() fails because `scores` was written after sigmoid saved it."""
    path = tmp_path / "buggy.py"
    path.write_text(BUGGY_PROGRAM)
    return str(path)
