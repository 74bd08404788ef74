"""Causes of misses worked on at stop 48 (docs/lint.md, "Recall causes worked on, stop 48").

* ADL015 (r736, fresh shapes r768 and bad_gru_cell_gates_renamed_then_added_in_place): one
  output of `chunk`/`split`/`unbind` reached through a second binding -- a new name (`g_ =
  g_h`, `candidate = n_x`) or a view of it under the same or another name (`q = q.view(b, n,
  h, d).transpose(1, 2)`) -- is still a view of a function that returns several views, and a
  write in place through it raises as one through the first name.  A copy (`.clone()`,
  `.contiguous()`, `.reshape()`), `.detach()` or an out-of-place result starts a new tensor.
* ADL017 (r735, fresh shapes r769 and bad_stacked_lstm_state_items_carried): recurrent states
  kept as items of a container on the module (`self.states[i] = cell(x, self.states[i])`,
  `self.h[i], self.c[i] = cell(x, (self.h[i], self.c[i]))`), re-bound with a graph from the
  container's own items, in a file that trains, when nothing else in the file touches the
  container but `__init__`, item reads and `len()`: no reset, detach or clearing anywhere.

Each fresh shape was written and run under torch before the changed linter ran on it; the
correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_s48_programs"
RECREATIONS = Path(__file__).parent / "recreations"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def _raises(source: str, name: str, text: str) -> None:
    with pytest.raises(RuntimeError, match=text):
        run_as_module(source, name).run()


def test_a_split_output_under_a_new_name_written_in_place():
    source = program_source(PROGRAMS, "bad_gru_cell_gates_renamed_then_added_in_place")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "candidate += r * n_h"), "ADL015")]
    assert "`candidate` is one of several views returned by `torch.split`" in found[0][2]
    _raises(source, "bad_gru", "output of a function that returns multiple views")


def test_a_view_of_a_chunk_rebound_to_its_name_written_in_place():
    source = (RECREATIONS / "r768_vit_attention_scales_query_heads_in_place.py").read_text(encoding="utf-8")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "q *= self.scale"), "ADL015")]
    assert "`self.qkv(x).chunk`" in found[0][2]


def test_split_outputs_aliased_by_name_in_the_mim_cell():
    source = (RECREATIONS / "r736_mimn_split_gates_added_in_place.py").read_text(encoding="utf-8")
    assert [(line, code) for line, code, _ in _found(source)] == [
        (line_starting(source, "g_ += g_x"), "ADL015"), (line_starting(source, "o_ += o_x"), "ADL015")]


@pytest.mark.parametrize("rebinding", [
    "candidate = n_x.clone()", "candidate = n_x.contiguous()", "candidate = n_x.detach()",
    "candidate = n_x * 1"])
def test_a_copy_of_the_split_output_is_a_new_tensor(rebinding):
    source = program_source(PROGRAMS, "bad_gru_cell_gates_renamed_then_added_in_place").replace(
        "candidate = n_x\n", rebinding + "\n")
    assert rebinding in source
    assert _found(source) == []


def test_state_items_carried_by_tuple_unpacking():
    source = program_source(PROGRAMS, "bad_stacked_lstm_state_items_carried")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "self.h[i], self.c[i] = cell("), "ADL017")]
    assert "`self.h[...]` (and the items of `self.c`)" in found[0][2]
    _raises(source, "bad_lstm", "backward through the graph a second time")


def test_state_items_carried_by_an_item_assignment():
    source = (RECREATIONS / "r769_nowcaster_gru_states_kept_in_list_on_model.py").read_text(encoding="utf-8")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "self.states[i] = cell(x, self.states[i])"), "ADL017")]
    assert "nothing resets `self.states`" in found[0][2]


def test_the_mim_states_are_one_finding_naming_every_list():
    source = (RECREATIONS / "r735_mim_states_kept_on_model_between_batches.py").read_text(encoding="utf-8")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "self.hidden_state[0], self.cell_state[0], self.st_memory ="), "ADL017")]
    for container in ("cell_state", "hidden_state_diff", "cell_state_diff"):
        assert f"`self.{container}`" in found[0][2]


@pytest.mark.parametrize("reset", [
    "self.model.states = [None, None]",
    "for i in range(len(self.model.states)):\n                self.model.states[i] = None",
    "self.model.states.clear()\n            self.model.states.extend([None, None])",
])
def test_a_reset_of_the_state_list_elsewhere_keeps_it_silent(reset):
    source = (RECREATIONS / "r769_nowcaster_gru_states_kept_in_list_on_model.py").read_text(encoding="utf-8")
    source = source.replace("        for frames, target in batches:\n",
                            "        for frames, target in batches:\n            " + reset + "\n")
    assert reset in source
    assert _found(source) == []
    run_as_module(source, "reset").run()  # the reset is real: no graph crosses batches


def test_state_items_in_a_file_that_never_trains_stay_silent():
    source = program_source(PROGRAMS, "bad_stacked_lstm_state_items_carried")
    source = source[:source.index("def run():")]
    assert _found(source) == []


@pytest.mark.parametrize("name", [
    "ok_vit_attention_scales_query_out_of_place",
    "ok_gru_cell_gates_renamed_then_added",
    "ok_nowcaster_resets_state_list_each_batch",
    "ok_stacked_lstm_states_detached_in_place_of_items",
])
def test_near_twins_run_and_stay_silent(name):
    source = program_source(PROGRAMS, name)
    assert _found(source) == []
    run_as_module(source, name).run()
