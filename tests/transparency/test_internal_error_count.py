"""The doctor's own failures are counted (doctor.internal_error_count) so that the project's tests
fail on one (tests/conftest.py, `_no_internal_error_of_ours`); users see nothing new."""

import pytest

from autograd_doctor.doctor import internal_error, internal_error_count


@pytest.mark.internal_error
def test_a_failure_of_ours_is_counted_and_silent_for_users(monkeypatch, capsys):
    monkeypatch.delenv("AUTOGRAD_DOCTOR_DEBUG", raising=False)
    before = internal_error_count()
    try:
        {}["missing"]
    except KeyError:
        internal_error()
    assert internal_error_count() == before + 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.internal_error
def test_printed_when_debugging(monkeypatch, capsys):
    monkeypatch.setenv("AUTOGRAD_DOCTOR_DEBUG", "1")
    try:
        {}["missing"]
    except KeyError:
        internal_error()
    assert "autograd-doctor internal error" in capsys.readouterr().err
