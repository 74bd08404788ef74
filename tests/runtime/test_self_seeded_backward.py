"""AD320: a one-element loss backpropagated with itself as the gradient seed. Held-out set 32's
silent miss (sotte/pytorch_tutorial#5) trained a linear regression with `loss.backward(loss)`: every
gradient is multiplied by the loss value, and nothing fails. These programs are other shapes of
that cause, written before the check was run on them: a trainer method seeding
`torch.autograd.backward` with the detached loss, and a loop passing `gradient=loss.data` with
`retain_graph=True` kept. Each help, applied, gives the gradients of the program seeded with 1;
a seed of several elements (`y.backward(y)`), a seed of ones, a seed of another tensor and a loss
equal to 1 stay silent."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

TRAINER_SEEDED_WITH_DETACHED_LOSS = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Trainer:
        def __init__(self):
            self.model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

        def fit_batch(self, x, y):
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            torch.autograd.backward(loss, loss.detach())  # SEED
            self.optimizer.step()
            return loss.item()


    trainer = Trainer()
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    losses = [trainer.fit_batch(x, y) for _ in range(5)]
    result = [p.detach().clone() for p in trainer.model.parameters()]
"""

LOOP_SEEDED_WITH_DATA = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    target = torch.tensor([1.0, -2.0, 0.5, 3.0])
    for step in range(4):
        loss = ((w - target) ** 2).sum()
        loss.backward(gradient=loss.data, retain_graph=True)  # SEED
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    result = [w.detach().clone()]
"""


def _check_named_and_fixed(tmp_path, program: str, fixed_line: str, unseeded_program: str) -> None:
    outcome = run_program(tmp_path, program)
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == ["AD320"], [d.code for d in outcome.diagnoses]
    assert outcome.diagnosis.primary.line == outcome.line("SEED")
    assert "loss ** 2 / 2" in " ".join(outcome.diagnosis.notes)
    assert outcome.diagnosis.help[0].replacement.strip() == fixed_line
    fixed = apply_help(outcome)
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference = run_plain(tmp_path, unseeded_program, "reference.py")["result"]
    original = run_plain(tmp_path, outcome.source, "original.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed_result, reference))
    assert not all(torch.allclose(a, b) for a, b in zip(original, reference))
    assert not [d for d in run_program(tmp_path, fixed, "fixed_watched.py").diagnoses if d.code == "AD320"]


def test_a_trainer_seeding_autograd_backward_with_the_detached_loss(tmp_path):
    import textwrap

    program = textwrap.dedent(TRAINER_SEEDED_WITH_DETACHED_LOSS)
    _check_named_and_fixed(tmp_path, program, "torch.autograd.backward(loss)",
                           program.replace("torch.autograd.backward(loss, loss.detach())", "loss.backward()"))


def test_a_loop_seeding_with_the_loss_data_keeps_retain_graph(tmp_path):
    import textwrap

    program = textwrap.dedent(LOOP_SEEDED_WITH_DATA)
    _check_named_and_fixed(tmp_path, program, "loss.backward(retain_graph=True)",
                           program.replace("gradient=loss.data, retain_graph=True", "retain_graph=True"))


def test_other_seeds_say_nothing(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        y = w * 2
        y.backward(y)                                   # several elements: the gradient of (y ** 2).sum() / 2
        loss = (w ** 2).sum()
        loss.backward(torch.ones_like(loss))            # a seed of ones
        weight = torch.tensor(0.5)
        (w.sum() * 3).backward(weight)                  # another tensor: a weight the program chose
        one = (w * 0).sum() + 1
        one.backward(one)                               # a loss equal to 1: the seed changes nothing
        loss = (w ** 2).sum()
        loss.backward()
        result = w.grad.clone()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD320"], [d.code for d in outcome.diagnoses]
