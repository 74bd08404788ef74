"""One form per concept: the mode is a `Mode`, and a report attached to an exception is
replaced by reference (`reattach`), not by matching its text."""

from __future__ import annotations

import json

import pytest
import torch

import autograd_doctor
from autograd_doctor.diagnosis.model import Diagnosis, Location
from autograd_doctor.doctor import Doctor, attach, reattach
from autograd_doctor.recording.modes import Mode


def saved_output_written(**options) -> RuntimeError:
    x = torch.ones(3, requires_grad=True)
    with autograd_doctor.watch(**options):
        y = torch.sigmoid(x)
        y[0] = 0.0
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
    return caught.value


def test_the_mode_is_typed_and_takes_the_plain_words():
    assert Doctor().mode is Mode.LIGHT
    assert Doctor(mode="full").mode is Mode.FULL
    assert Doctor(strict=True).mode is Mode.FULL  # strict needs every save recorded
    with pytest.raises(ValueError, match=r"mode must be one of \('light', 'full'\), not 'fast'"):
        Doctor(mode="fast")
    with pytest.raises(ValueError, match="not 'fast'"):
        autograd_doctor.watch(mode="fast")


@pytest.mark.parametrize("mode", [Mode.LIGHT, Mode.FULL])
def test_a_diagnosis_knows_the_mode_that_found_it_and_the_json_says_it(mode):
    (diagnosis,) = autograd_doctor.diagnoses_of(saved_output_written(mode=mode.value))
    assert diagnosis.code == "AD101" and diagnosis.mode is mode
    data = diagnosis.to_dict()
    assert data["mode"] == mode.value and list(data)[-1] == "mode"
    assert "mode" not in diagnosis.extra  # one place: the field, not a loose extra


def test_the_json_mode_of_a_second_run_and_its_place_before_what_front_ends_add():
    diagnosis = Diagnosis("AD101", "title", "error", None, mode=Mode.FULL, second_run=True)
    diagnosis.extra.update({"node": "SigmoidBackward0", "rank": 1, "verify": "verified"})
    data = json.loads(json.dumps(diagnosis.to_dict()))
    assert list(data)[-4:] == ["node", "mode", "rank", "verify"]
    assert data["mode"] == "full (second run)"


def two_diagnoses_with_one_title() -> tuple[RuntimeError, Diagnosis, Diagnosis]:
    error = RuntimeError("boom")
    first = Diagnosis("AD101", "same title", "error", Location("a.py", 1, source="a = 1"))
    second = Diagnosis("AD101", "same title", "error", Location("b.py", 2, source="b = 2"))
    attach(error, first)
    attach(error, second)
    return error, first, second


def test_reattach_replaces_the_note_of_that_diagnosis_even_when_titles_match():
    error, first, second = two_diagnoses_with_one_title()
    replacement = Diagnosis("AD101", "same title", "error", Location("c.py", 3, source="c = 3"))
    reattach(error, second, replacement)
    assert autograd_doctor.diagnoses_of(error) == [first, replacement]
    assert [("a.py" in note, "c.py" in note) for note in error.__notes__] == [(True, False), (False, True)]


def test_reattach_of_the_same_diagnosis_renders_it_again():
    error, first, second = two_diagnoses_with_one_title()
    first.notes.append("a note added after it was attached")
    reattach(error, first, first)
    assert "a note added after it was attached" in error.__notes__[0]
    assert "a note added after it was attached" not in error.__notes__[1]
    assert autograd_doctor.diagnoses_of(error) == [first, second]


def test_the_light_mode_report_is_replaced_by_reference_on_a_real_failure():
    error = saved_output_written()
    (light,) = autograd_doctor.diagnoses_of(error)
    full = autograd_doctor.diagnoses_of(saved_output_written(mode="full"))[0]
    reattach(error, light, full)
    assert autograd_doctor.diagnoses_of(error) == [full]
    assert len(error.__notes__) == 1 and "saved here" in error.__notes__[0]
