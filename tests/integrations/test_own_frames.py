"""own_frames: the doctor's frames taken out of a real exception's traceback, chained ones too."""

from __future__ import annotations

import traceback

import torch

from autograd_doctor import watch
from autograd_doctor.recording.own_frames import PACKAGE_DIR as OWN_DIR, call_as_caller, hide_our_frames, is_our_code


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
    """The wrappers take their frames out as the exception leaves them: the user holds the
    traceback python would have given, without calling anything."""
    plain = caught(write_out_of_bounds)
    with watch():
        watched = caught(write_out_of_bounds)
    assert files_and_functions(watched) == files_and_functions(plain)
    assert str(watched) == str(plain)


def test_hide_our_frames_relinks_the_traceback_past_ours():
    def fails():
        raise KeyError("from the user's function")

    error = caught(lambda: call_as_caller(fails, (), {}))
    before = [frame.f_code for frame, _ in traceback.walk_tb(error.__traceback__)]
    assert any(is_our_code(code) for code in before)  # the stand-in caller frame is there
    first_entry = error.__traceback__
    hide_our_frames(error)
    after = [frame.f_code for frame, _ in traceback.walk_tb(error.__traceback__)]
    assert after == [code for code in before if not is_our_code(code)]
    assert error.__traceback__ is first_entry  # relinked in place: every holder sees the same


def test_chained_exceptions_lose_our_frames_too():
    def wrapped():
        try:
            write_out_of_bounds()
        except IndexError as error:
            raise ValueError("while writing") from error

    with watch():
        error = caught(wrapped)
    hide_our_frames(error)
    for chained in (error, error.__cause__):
        assert not any(file.startswith(OWN_DIR) for file, _ in files_and_functions(chained))
