"""A loss computed from what a function returns, the function copying its loss terms by value
(`torch.tensor(losses)`, `torch.as_tensor(terms)`): the loss has no graph, and backward() fails
with "element 0 of tensors does not require grad". The cause is the copy inside the called
function, not the backward() line: AD304 names it, with torch.stack as the help. When another term
keeps the loss trainable, nothing raises and AD304 warns."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

TASK_LOSSES_COPIED = """
    import torch
    from torch import nn
    import torch.nn.functional as F


    def task_losses(heads, x, targets):
        losses = [F.mse_loss(head(x), y) for head, y in zip(heads, targets)]
        return torch.tensor(losses)  # COPY


    torch.manual_seed(0)
    heads = nn.ModuleList(nn.Linear(4, 1) for _ in range(3))
    optimizer = torch.optim.SGD(heads.parameters(), lr=0.1)
    x = torch.randn(8, 4)
    targets = [torch.randn(8, 1) for _ in range(3)]
    for step in range(3):
        loss = task_losses(heads, x, targets).sum()
        optimizer.zero_grad()
        loss.backward()  # BACKWARD
        optimizer.step()
    result = [p.detach().clone() for p in heads.parameters()]
"""

INTENDED = TASK_LOSSES_COPIED.replace("torch.tensor(losses)", "torch.stack(losses)")

TERMS_COPIED_NEXT_TO_A_TRAINED_ONE = """
    import torch

    w = torch.ones(3, requires_grad=True)


    def penalties(w):
        terms = (w.abs().sum(), (w ** 2).sum())
        stacked = torch.as_tensor(terms)  # COPY
        return stacked.sum()


    loss = (w * 2).sum() + penalties(w)
    loss.backward()
"""

COPIED_FOR_A_LOG = """
    import torch

    w = torch.ones(3, requires_grad=True)


    def figures(w):
        return torch.tensor([w.sum(), w.mean()])


    loss = (w * 2).sum()
    logged = figures(w)
    loss.backward()
"""


def test_the_copy_in_the_called_function_is_the_cause_of_the_error(tmp_path):
    outcome = run_as_script(tmp_path, TASK_LOSSES_COPIED)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD304"
    assert diagnosis.primary.line == outcome.line("COPY")
    assert diagnosis.help[0].replacement == "return torch.stack(losses)"


def test_the_help_applied_trains_the_heads_like_the_intended_program(tmp_path):
    outcome = run_as_script(tmp_path, TASK_LOSSES_COPIED)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert len(fixed["result"]) == len(intended["result"]) == 6
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_copied_terms_next_to_a_trained_term_are_warned_about(tmp_path):
    outcome = run_program(tmp_path, TERMS_COPIED_NEXT_TO_A_TRAINED_ONE)
    assert outcome.error is None
    copies = [d for d in outcome.diagnoses if d.code == "AD304"]
    assert copies and copies[0].primary.line == outcome.line("COPY")


def test_a_copy_that_the_loss_does_not_use_says_nothing(tmp_path):
    outcome = run_program(tmp_path, COPIED_FOR_A_LOG)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD304"]


def test_a_copy_in_a_function_whose_losses_are_unpacked_is_named(tmp_path):
    # `value_loss, policy_loss = losses()`: each unpacked name is a term computed by the call
    # (set 9's A3C worker: log-probabilities rebuilt with torch.tensor inside calculate_loss).
    source = """
        import torch
        from torch import nn

        torch.manual_seed(0)
        policy, value = nn.Linear(3, 2), nn.Linear(3, 1)
        optimizer = torch.optim.SGD([*policy.parameters(), *value.parameters()], lr=0.1)

        def losses(states, rewards):
            log_probs = torch.tensor([torch.log_softmax(policy(s), -1)[0] for s in states])  # COPY
            values = value(states).squeeze(-1)
            value_loss = ((rewards - values) ** 2).mean()
            policy_loss = -((rewards - values.detach()) * log_probs).mean() + 0.01 * policy.weight.pow(2).sum()
            return value_loss, policy_loss

        for step in range(3):
            value_loss, policy_loss = losses(torch.randn(5, 3), torch.randn(5))
            optimizer.zero_grad()
            (value_loss + policy_loss).backward()
            optimizer.step()
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD304"]
    assert diagnosis.primary.line == outcome.line("COPY")
    assert "torch.stack(" in apply_help(outcome)
