"""own_frames: the doctor's frames taken out of a real exception's traceback, chained ones too."""

from __future__ import annotations

import traceback

import torch

from autograd_doctor import watch
from autograd_doctor.own_frames import OWN_DIR, hide_own_frames


def write_out_of_bounds():
    y = torch.sigmoid(torch.ones(3))
    y[10] = 2.0  # IndexError inside torch's __setitem__, which the doctor wraps while watching


def caught(function) -> BaseException:
    try:
        function()
    except BaseException as error:
        return error
    raise AssertionError("no exception")


def files_and_functions(error: BaseException) -> list[tuple[str, str]]:
    return [(frame.filename, frame.name) for frame in traceback.extract_tb(error.__traceback__)]


def test_traceback_has_the_frames_it_has_without_the_doctor():
    plain = caught(write_out_of_bounds)
    with watch():
        watched = caught(write_out_of_bounds)
    assert any(file.startswith(OWN_DIR) for file, _ in files_and_functions(watched))  # our wrapper was there
    hide_own_frames(watched)
    assert files_and_functions(watched) == files_and_functions(plain)
    assert str(watched) == str(plain)


def test_chained_exceptions_lose_our_frames_too():
    def wrapped():
        try:
            write_out_of_bounds()
        except IndexError as error:
            raise ValueError("while writing") from error

    with watch():
        error = caught(wrapped)
    hide_own_frames(error)
    for chained in (error, error.__cause__):
        assert not any(file.startswith(OWN_DIR) for file, _ in files_and_functions(chained))
