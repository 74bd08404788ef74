"""Held-out set 48's causes (docs/bug-reports.md, "Set 48"). The other shapes below were written
before the change was run on them.

- AD113, a list given to NumPy whose name is a loop variable (github.com/sanj909/Timeseries-GANs
  pull request 1: a plotting helper's `np.asarray(ys) for xs, ys in zip(self.X, self.Y)` where one
  curve holds loss tensors and the other zeros): the help was `[t.detach() for t in ys]`, written
  from the one iteration that failed; the next iteration's list holds numbers, which have no
  `.detach()`, and the changed program still failed. For a name bound anew on each iteration (a
  comprehension's or a `for` loop's target) the help now detaches the tensors among the elements
  and gives NumPy the others as they are.
- AD302, state kept on a submodule across calls (github.com/facebookexperimental/protoquant pull
  request 25: an FP8 linear layer inside a model quantizes with the scale of its previous input's
  absolute maximum, stored on `self` with its graph): the check for an object's method that reads
  `self.<attribute>` and then stores this call's result there looked at the program's own objects
  only, not at the submodules of a model, and the diagnosis was advice. Submodules are now looked
  at too, and the help detaches the stored value after storing it."""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET48 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set48")
ANIMATOR = "timegan_autoencoder_loss_handed_to_plot_animator"
FP8 = "fp8_linear_delayed_scale_kept_with_graph"


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET48, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def _same(changed, correct) -> bool:
    if isinstance(changed, dict):
        return changed.keys() == correct.keys() and all(_same(changed[k], correct[k]) for k in changed)
    if isinstance(changed, (list, tuple)):
        return len(changed) == len(correct) and all(_same(a, b) for a, b in zip(changed, correct))
    if isinstance(changed, torch.Tensor):
        return torch.equal(changed, correct)
    return changed == correct


def test_the_set48_animator_curves_get_their_tensors_detached(tmp_path):
    outcome = run_as_script(tmp_path, _source("cases", ANIMATOR))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert "[t.detach() if isinstance(t, torch.Tensor) else t for t in ys]" in diagnosis.help[0].replacement
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, _source("correct", ANIMATOR), "c.py")
    assert _same(changed["result"], correct["result"])


# Another shape: a `for` loop over a history dict whose lists hold loss tensors for one key and
# numbers (a learning rate) for another; the loss list comes first, so it is the one that fails.
HISTORY_SUMMARY = """
    import numpy as np
    import torch

    torch.manual_seed(0)
    weight = torch.randn(4, requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    history = {"loss": [], "lr": []}
    for step in range(3):
        optimizer.zero_grad()
        loss = ((weight - 1.0) ** 2).sum()
        loss.backward()
        optimizer.step()
        history["loss"].append(loss)
        history["lr"].append(0.1)
    summary = {}
    for key, values in history.items():
        summary[key] = float(np.mean(values))  # SUMMARY
    result = {"summary": summary, "weight": weight.detach().clone()}
"""


def test_a_loop_variable_list_of_losses_and_numbers_gets_its_tensors_detached(tmp_path):
    outcome = run_as_script(tmp_path, HISTORY_SUMMARY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert diagnosis.help[0].replacement.strip() == \
        "summary[key] = float(np.mean([t.detach() if isinstance(t, torch.Tensor) else t for t in values]))"
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, HISTORY_SUMMARY.replace("history[\"loss\"].append(loss)",
                                                          "history[\"loss\"].append(loss.detach())"), "c.py")
    assert _same(changed["result"], correct["result"])


def test_the_correct_animator_and_summary_are_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", ANIMATOR))
    assert outcome.error is None and not outcome.diagnoses
    outcome = run_program(tmp_path, HISTORY_SUMMARY.replace("history[\"loss\"].append(loss)",
                                                            "history[\"loss\"].append(loss.item())"))
    assert outcome.error is None and not outcome.diagnoses


def test_a_list_not_bound_by_a_loop_keeps_the_plain_detach(tmp_path):
    program = """
        import numpy as np
        import torch

        weight = torch.randn(3, requires_grad=True)
        losses = [(weight ** 2).sum(), (weight - 1).abs().sum()]
        average = np.mean(losses)
    """
    outcome = run_as_script(tmp_path, program)
    assert outcome.diagnosis.code == codes.NUMPY_REQUIRES_GRAD
    assert "[t.detach() for t in losses]" in outcome.diagnosis.help[0].replacement


def test_the_set48_fp8_scale_state_on_a_submodule_is_detached_after_storing(tmp_path):
    outcome = run_program(tmp_path, _source("cases", FP8))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.BACKWARD_TWICE
    assert diagnosis.primary.line == 43  # self.fp8_amax_x = tensor_to_amax(x)
    assert diagnosis.help[0].replacement.splitlines()[-1].strip() == "self.fp8_amax_x = self.fp8_amax_x.detach()"
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, _source("correct", FP8), "c.py")
    assert _same(changed["result"], correct["result"])


# Another shape: a layer that divides by the norm of its previous input, kept on self, inside an
# nn.Sequential (the model's own attributes hold no tensor; its second layer does).
RUNNING_NORM = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class PreviousNormScale(nn.Module):
        def __init__(self):
            super().__init__()
            self.previous_norm = torch.tensor(1.0)

        def forward(self, x):
            out = x / self.previous_norm
            self.previous_norm = x.norm()  # KEPT
            return out


    model = nn.Sequential(nn.Linear(5, 5), PreviousNormScale(), nn.Linear(5, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(3):
        optimizer.zero_grad()
        loss = model(torch.randn(4, 5)).pow(2).mean()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""


def test_a_previous_norm_kept_on_a_sequential_layer_is_detached_after_storing(tmp_path):
    outcome = run_program(tmp_path, RUNNING_NORM)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.BACKWARD_TWICE
    assert "self.previous_norm = self.previous_norm.detach()" in diagnosis.help[0].replacement
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, RUNNING_NORM.replace("self.previous_norm = x.norm()  # KEPT",
                                                       "self.previous_norm = x.norm().detach()  # KEPT"), "c.py")
    assert _same(changed["result"], correct["result"])


def test_the_detached_fp8_and_norm_states_are_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", FP8))
    assert outcome.error is None and not outcome.diagnoses
    outcome = run_program(tmp_path, RUNNING_NORM.replace("self.previous_norm = x.norm()  # KEPT",
                                                         "self.previous_norm = x.norm().detach()  # KEPT"))
    assert outcome.error is None and not outcome.diagnoses
