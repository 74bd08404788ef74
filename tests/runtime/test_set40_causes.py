"""Held-out set 40's cause: per-loss gradients read from `.grad` inside the loop that calls each
loss's backward().

PINA#741 (a physics-informed network with a frozen Fourier-feature layer, trained with a
self-adaptive loss weighting): for each condition the weighting calls
`loss.backward(retain_graph=True)` and flattens `p.grad` of every parameter; the frozen layer's
`.grad` is None and the comprehension fails. AD309's help put zeros in the frozen parameter's place:
the program then ran, but `.grad` adds up over the loop, so from the second condition on the norms
were the sums of the conditions' gradients (PINA#718, the same library's silent bug) and the
weights differed from the library's fix, which takes each condition's gradients with
`torch.autograd.grad`. A help that only gets past the None is withheld when the read sits in a
loop that calls backward() before it on every iteration and clears nothing: the report explains
the accumulation and advises `torch.autograd.grad(loss, params, retain_graph=True,
allow_unused=True)`. Tested on the set-40 case and on a multi-task loop written before the change
was run on it; a single backward() followed by the same read keeps the zero-filling help, and the
correct versions run silent."""

from __future__ import annotations

import os

from helpers import run_as_script

HERE = os.path.dirname(os.path.abspath(__file__))
SET40 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set40")
FROZEN = "pinn_self_adaptive_weighting_with_a_frozen_fourier_layer.py"

# Another shape, written before the change ran on it: GradNorm-style task weights from the norm
# of each task loss's gradient on a shared trunk whose first layer is frozen.
MULTI_TASK = """
    import torch
    import torch.nn as nn

    torch.manual_seed(7)

    trunk = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8))
    trunk[0].requires_grad_(False)
    heads = nn.ModuleList([nn.Linear(8, 1) for _ in range(3)])
    x = torch.randn(32, 6)
    targets = [torch.randn(32, 1) for _ in range(3)]



    def task_weights(task_losses):
        norms = []
        for task_loss in task_losses:
            task_loss.backward(retain_graph=True)
            norms.append(torch.stack([p.grad.norm() for p in trunk.parameters()]).norm())
        return [sum(norms) / n for n in norms]


    features = trunk(x)
    task_losses = [((head(features) - y) ** 2).mean() for head, y in zip(heads, targets)]
    result = {"weights": torch.stack(task_weights(task_losses))}
"""

# The same read after one backward(): nothing adds up, the zero-filling help stays.
ONE_BACKWARD = """
    import torch
    import torch.nn as nn

    torch.manual_seed(8)

    net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    net[0].requires_grad_(False)
    loss = net(torch.randn(10, 4)).pow(2).mean()
    loss.backward()
    flat = torch.cat([p.grad.flatten() for p in net.parameters()])
    result = {"flat": flat}
"""

# A hand-written training loop that never clears .grad, with a frozen layer: its `loss` is computed
# in the body, not a loop over losses; the skip help stays as it was.
TRAINING_LOOP = """
    import torch
    import torch.nn as nn

    torch.manual_seed(9)

    net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    net[0].requires_grad_(False)
    x, y = torch.randn(12, 3), torch.randn(12, 1)
    for step in range(3):
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        for p in net.parameters():
            p.data -= 0.1 * p.grad
    result = {"weight": net[2].weight.detach().clone()}
"""

# The correct near-twin of MULTI_TASK: each task's own gradients from torch.autograd.grad.
MULTI_TASK_BY_GRAD = MULTI_TASK.replace(
    """            task_loss.backward(retain_graph=True)
            norms.append(torch.stack([p.grad.norm() for p in trunk.parameters()]).norm())""",
    """            params = [p for p in trunk.parameters() if p.requires_grad]
            grads = torch.autograd.grad(task_loss, params, retain_graph=True, allow_unused=True)
            norms.append(torch.stack([g.norm() for g in grads if g is not None]).norm())""")


def _code_helps(diagnosis):
    return [h for h in diagnosis.help if h.replacement is not None]


def test_the_set40_case_explains_the_sum_and_offers_no_change_that_keeps_it(tmp_path):
    outcome = run_as_script(tmp_path, open(os.path.join(SET40, "cases", FROZEN)).read())
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD309"
    assert outcome.diagnosis.primary.line == 51
    assert not _code_helps(outcome.diagnosis)
    assert any("sum of this iteration's and the earlier ones'" in note for note in outcome.diagnosis.notes)
    assert "torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)" in \
        outcome.diagnosis.help[0].message


def test_another_shape_a_multi_task_loop_gets_the_same_report(tmp_path):
    outcome = run_as_script(tmp_path, MULTI_TASK)
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD309"
    assert not _code_helps(outcome.diagnosis)
    assert "torch.autograd.grad(task_loss, params" in outcome.diagnosis.help[0].message


def test_one_backward_before_the_read_keeps_the_zero_filling_help(tmp_path):
    outcome = run_as_script(tmp_path, ONE_BACKWARD)
    assert outcome.diagnosis.code == "AD309"
    assert "put zeros in the place" in _code_helps(outcome.diagnosis)[0].message
    assert not any("earlier ones'" in note for note in outcome.diagnosis.notes)


def test_a_training_loop_keeps_the_skip_help(tmp_path):
    outcome = run_as_script(tmp_path, TRAINING_LOOP)
    assert outcome.diagnosis.code == "AD309"
    assert "skip the parameters that have no gradient" in _code_helps(outcome.diagnosis)[0].message


def test_the_correct_versions_run_silent(tmp_path):
    outcome = run_as_script(tmp_path, MULTI_TASK_BY_GRAD)
    assert outcome.error is None and not outcome.diagnoses
    outcome = run_as_script(tmp_path, open(os.path.join(SET40, "correct", FROZEN)).read())
    assert outcome.error is None and not outcome.diagnoses
