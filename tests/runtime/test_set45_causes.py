"""Held-out set 45's causes (docs/bug-reports.md, "Set 45"). The other shapes below were written
before the changes were run on them.

- AD112 on losses kept per element (a loss function called with reduction='none') given to
  backward() (blog.csdn.net 122732509, `nn.CrossEntropyLoss(reduction='none')`, whose post reduces
  with `.sum()`): whether the training meant the mean or the sum, which scales the gradients and an
  SGD step by the number of elements, the program does not show. The help is advice naming both,
  unless the program itself reduces that tensor after backward() (the number it reports).
- AD326, a parameter whose shape was changed through `.data` while a graph made before the change
  still held its gradient accumulator (discuss.pytorch.org 196779, pruning `layer.weight.data =
  layer.weight.data[:, :90]` with the first loss `x` still alive): the new graph reuses that
  accumulator, which checks the old shape, and backward() fails with "Function TBackward0 returned
  an invalid gradient". The shape change is named; when the tensor backward() was called on is the
  same name that held the old graph, the help releases it first (`del x`).
- AD218 (full mode) no longer counts a leaf whose shape changed since the last backward() as
  updated from its gradient (a step keeps the shape): the correct pruning program was reported."""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET45 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set45")


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET45, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def _codes(outcome) -> list[str]:
    return [d.code for d in outcome.diagnoses]


# --- AD112: per-element losses given to backward() --------------------------------------------------

# Another shape: a per-sample robust regression loss, summed or averaged nowhere, in an SGD loop.
PER_SAMPLE_HUBER = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(6, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    for epoch in range(3):
        optimizer.zero_grad()
        per_sample = F.smooth_l1_loss(model(x), y, reduction="none")
        per_sample.backward()  # RAISES
        optimizer.step()
    result = {"weight": model.weight.detach().clone()}
"""

# The same loop where the program reports the mean of those losses after backward(): that is the
# reduction it shows, and the help applies it.
PER_SAMPLE_HUBER_REPORTED_AS_MEAN = PER_SAMPLE_HUBER.replace(
    "        optimizer.step()\n",
    "        optimizer.step()\n        history = per_sample.mean().item()\n")


def test_the_set45_per_sample_cross_entropy_gets_advice_naming_both_reductions(tmp_path):
    outcome = run_as_script(tmp_path, _source("cases", "per_sample_cross_entropy_backward_without_reduction"))
    assert outcome.diagnosis.code == codes.BACKWARD_NON_SCALAR
    assert all(not h.replacement for h in outcome.diagnosis.help)
    message = outcome.diagnosis.help[0].message
    assert "l.mean()" in message and "l.sum()" in message


def test_per_sample_huber_losses_in_an_sgd_loop_get_advice(tmp_path):
    outcome = run_as_script(tmp_path, PER_SAMPLE_HUBER)
    assert outcome.diagnosis.code == codes.BACKWARD_NON_SCALAR
    assert outcome.diagnosis.primary.line == outcome.line("RAISES")
    assert all(not h.replacement for h in outcome.diagnosis.help)


def test_per_sample_losses_the_program_reports_as_a_mean_get_the_mean(tmp_path):
    outcome = run_as_script(tmp_path, PER_SAMPLE_HUBER_REPORTED_AS_MEAN)
    assert outcome.diagnosis.code == codes.BACKWARD_NON_SCALAR
    changed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, PER_SAMPLE_HUBER_REPORTED_AS_MEAN.replace(
        'reduction="none")', ")"), "reference.py")
    assert torch.equal(changed["result"]["weight"], reference["result"]["weight"])


def test_the_summed_losses_of_the_correct_version_are_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", "per_sample_cross_entropy_backward_without_reduction"))
    assert outcome.error is None and not outcome.diagnoses


# --- AD326: a parameter's shape changed through .data under a stale gradient accumulator -----------

# Another shape: a vocabulary pruned by cutting rows of an embedding table (EmbeddingBackward0).
VOCABULARY_PRUNED = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    def shrink_vocabulary(keep):
        emb = nn.Embedding(60, 4)
        ids = torch.tensor([1, 5, 7])
        loss = emb(ids).pow(2).sum()
        loss.backward()
        emb.weight.data = emb.weight.data[:keep]  # SHRINK
        emb.weight.grad.data = emb.weight.grad.data[:keep]
        loss = emb(ids).pow(2).sum()
        loss.backward()
        return emb


    emb = shrink_vocabulary(50)
    result = {"weight": emb.weight.detach().clone(), "grad": emb.weight.grad.clone()}
"""

# The old graph is also kept in a list: releasing the name would not free it, so no change is
# offered (advice only).
VOCABULARY_PRUNED_LOSS_KEPT = VOCABULARY_PRUNED.replace(
    "        loss.backward()\n        emb.weight.data",
    "        loss.backward()\n        kept = [loss]\n        emb.weight.data")

# Near-twin: the shape is changed before any graph reached the parameter (nothing to report).
VOCABULARY_PRUNED_BEFORE_TRAINING = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    emb = nn.Embedding(60, 4)
    emb.weight.data = emb.weight.data[:50]
    ids = torch.tensor([1, 5, 7])
    loss = emb(ids).pow(2).sum()
    loss.backward()
    result = {"grad": emb.weight.grad.clone()}
"""


def test_the_set45_pruned_weight_is_named_and_the_old_loss_released(tmp_path):
    case = _source("cases", "pruned_linear_weight_sliced_while_old_loss_alive")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == codes.STALE_GRADIENT_ACCUMULATOR
    assert "layer.weight.data = layer.weight.data[:, :keep_columns]" in \
        case.splitlines()[outcome.diagnosis.primary.line - 1]
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, _source("correct", "pruned_linear_weight_sliced_while_old_loss_alive"), "c.py")
    for key in ("weight", "weight_grad", "bias_grad"):
        assert torch.equal(changed["result"][key], correct["result"][key])


def test_a_pruned_vocabulary_is_named_and_fixed_the_same_way(tmp_path):
    outcome = run_as_script(tmp_path, VOCABULARY_PRUNED)
    assert outcome.diagnosis.code == codes.STALE_GRADIENT_ACCUMULATOR
    assert outcome.diagnosis.primary.line == outcome.line("SHRINK")
    changed = run_plain(tmp_path, apply_help(outcome))
    released = run_plain(tmp_path, VOCABULARY_PRUNED.replace(
        "        emb.weight.data = emb.weight.data[:keep]", "        del loss\n        emb.weight.data = "
        "emb.weight.data[:keep]"), "released.py")
    assert torch.equal(changed["result"]["grad"], released["result"]["grad"])


def test_a_graph_also_kept_elsewhere_gets_advice_only(tmp_path):
    outcome = run_as_script(tmp_path, VOCABULARY_PRUNED_LOSS_KEPT)
    assert outcome.diagnosis.code == codes.STALE_GRADIENT_ACCUMULATOR
    assert all(not h.replacement for h in outcome.diagnosis.help)


def test_the_released_loss_of_the_correct_version_is_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", "pruned_linear_weight_sliced_while_old_loss_alive"))
    assert outcome.error is None and not outcome.diagnoses


def test_a_shape_changed_before_any_graph_is_silent(tmp_path):
    outcome = run_program(tmp_path, VOCABULARY_PRUNED_BEFORE_TRAINING)
    assert outcome.error is None and not outcome.diagnoses


# --- AD218 (full mode): a leaf whose shape changed since the last backward() was not updated from
# its gradient (a gradient step keeps the shape); the pruned programs above are silent ------------

# The pruned vocabulary, its old loss released: a correct program (the gradient is carried on purpose).
VOCABULARY_PRUNED_RELEASED = VOCABULARY_PRUNED.replace(
    "        emb.weight.data = emb.weight.data[:keep]", "        del loss\n        emb.weight.data = "
    "emb.weight.data[:keep]")

# Its twin that does update the table by hand from the gradient and never clears it: still AD218.
VOCABULARY_UPDATED_BY_HAND = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    emb = nn.Embedding(60, 4)
    ids = torch.tensor([1, 5, 7])
    for step in range(3):
        loss = emb(ids).pow(2).sum()
        loss.backward()  # BACKWARD
        emb.weight.data -= 0.1 * emb.weight.grad.data
    result = {"weight": emb.weight.detach().clone()}
"""


def test_the_correct_pruning_program_is_silent_in_full_mode(tmp_path):
    outcome = run_program(tmp_path, _source("correct", "pruned_linear_weight_sliced_while_old_loss_alive"),
                          mode="full")
    assert outcome.error is None and not outcome.diagnoses, _codes(outcome)


def test_a_pruned_vocabulary_whose_loss_was_released_is_silent_in_full_mode(tmp_path):
    outcome = run_program(tmp_path, VOCABULARY_PRUNED_RELEASED, mode="full")
    assert outcome.error is None and not outcome.diagnoses, _codes(outcome)


def test_a_table_updated_by_hand_without_clearing_is_still_reported_in_full_mode(tmp_path):
    outcome = run_program(tmp_path, VOCABULARY_UPDATED_BY_HAND, mode="full")
    assert codes.STALE_LEAF_GRADIENT in _codes(outcome)
