"""AD206 for a loss term that is added only from a later iteration on (`if epoch >= warmup:
loss += ...`): at the first backward() of the line the term's statement has not run, so its
names are not in the frame yet; the line is read again at the next backward() calls. When the
term cuts several tensors (`p.data - p_old.data`), the help gives back the gradient of the one an
optimizer steps. Each help, applied, gives the gradients of a hand-written loop."""

from __future__ import annotations

import textwrap

import torch

from helpers import apply_help, run_plain, run_program

WARMUP = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randn(6, 2)
    for epoch in range(4):
        loss = F.mse_loss(model(x), y)
        if epoch >= 2:
            smooth = model.weight.diff(dim=1).pow(2).sum()
            loss += 0.5 * smooth.item()  # NUMBER
        opt.zero_grad()
        loss.backward()  # BACKWARD
        opt.step()
"""


def test_a_term_added_after_a_warmup_is_read_when_it_first_runs(tmp_path):
    outcome = run_program(tmp_path, WARMUP)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert len(outcome.warnings) == 1
    assert diagnosis.primary.line == outcome.line("NUMBER")
    assert diagnosis.help[0].replacement == "loss += 0.5 * smooth"


def test_the_warmup_help_applied_trains_the_term_from_its_epoch_on(tmp_path):
    outcome = run_program(tmp_path, WARMUP)
    fixed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)  # the same model, data and loop, the smoothness term as a tensor
    model = torch.nn.Linear(4, 2)
    x, y = torch.randn(6, 4), torch.randn(6, 2)
    weight, bias = model.weight.detach().clone(), model.bias.detach().clone()
    for epoch in range(4):
        w, b = weight.clone().requires_grad_(), bias.clone().requires_grad_()
        loss = torch.nn.functional.mse_loss(x @ w.T + b, y)
        if epoch >= 2:
            loss = loss + 0.5 * w.diff(dim=1).pow(2).sum()
        gw, gb = torch.autograd.grad(loss, [w, b])
        weight, bias = weight - 0.1 * gw, bias - 0.1 * gb
    assert torch.allclose(fixed["model"].weight, weight, atol=1e-6)
    assert torch.allclose(fixed["model"].bias, bias, atol=1e-6)
    buggy = run_plain(tmp_path, textwrap.dedent(WARMUP), "buggy.py")
    assert not torch.allclose(buggy["model"].weight, weight, atol=1e-6)  # the number trained nothing


ANCHORED = """
    import copy

    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    tasks = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(2)]
    for task, (x, y) in enumerate(tasks):
        if task > 0:
            previous = copy.deepcopy(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        for step in range(2):
            loss = F.mse_loss(model(x), y)
            if task > 0:
                for p, p_old in zip(model.parameters(), previous.parameters()):
                    loss = loss + 2.0 * (p.data - p_old.data).pow(2).sum()  # ANCHOR
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_of_two_cut_tensors_the_help_gives_back_the_one_an_optimizer_steps(tmp_path):
    outcome = run_program(tmp_path, ANCHORED)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("ANCHOR")
    # p is the model's parameter (the optimizer steps it); p_old is the frozen copy it is pulled to.
    assert diagnosis.help[0].replacement == "loss = loss + 2.0 * (p - p_old.data).pow(2).sum()"


def test_the_anchored_help_applied_pulls_the_model_to_its_previous_weights(tmp_path):
    outcome = run_program(tmp_path, ANCHORED)
    fixed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)  # the same tasks and loop, the anchor term written with autograd
    model = torch.nn.Linear(3, 1)
    tasks = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(2)]
    weight, bias = model.weight.detach().clone(), model.bias.detach().clone()
    for task, (x, y) in enumerate(tasks):
        anchor = (weight.clone(), bias.clone())
        for _ in range(2):
            w, b = weight.clone().requires_grad_(), bias.clone().requires_grad_()
            loss = torch.nn.functional.mse_loss(x @ w.T + b, y)
            if task > 0:
                loss = loss + 2.0 * (w - anchor[0]).pow(2).sum() + 2.0 * (b - anchor[1]).pow(2).sum()
            gw, gb = torch.autograd.grad(loss, [w, b])
            weight, bias = weight - 0.05 * gw, bias - 0.05 * gb
    assert torch.allclose(fixed["model"].weight, weight, atol=1e-6)
    assert torch.allclose(fixed["model"].bias, bias, atol=1e-6)
    buggy = run_plain(tmp_path, textwrap.dedent(ANCHORED), "buggy.py")
    assert not torch.allclose(buggy["model"].weight, weight, atol=1e-6)  # the anchor trained nothing


def test_a_term_whose_statement_never_runs_is_not_reported(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        w = torch.randn(3, requires_grad=True)
        for step in range(20):
            loss = w.pow(2).sum()
            if step > 100:
                late = w.sum()
                loss = loss + 0.1 * late.item()
            loss.backward()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD206"]  # the term never reached a backward()
