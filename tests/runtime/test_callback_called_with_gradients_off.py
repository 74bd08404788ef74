"""AD301 names the call of a callable given to a function of the user's that turns gradients off
(`@torch.no_grad() def step(self, closure)` calling `loss = closure()`, set 19's HeavyBall#10): the
callable computes a loss and backpropagates, which needs gradients on, for every callable given
there. Before, the report named the loss inside the callable and decorated the callable; the
accepted fix wraps the call in `with torch.enable_grad():`, which is now the first help (the
decorator stays as the second). Applied, the program trains as the hand-written version.

Two programs of the cause in other shapes, written before the change was run on them: a training
utility (not an optimizer) that updates the parameters by hand under its decorator and calls the
loss function it was given, and a trainer's method, in a file that imports torch as `th`, that
passes a batch to the callable and updates a teacher by EMA."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

HAND_UPDATE_CALLS_LOSS_FUNCTION = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    @torch.no_grad()  # DECORATOR
    def descend(parameters, compute_loss, lr=0.1):
        value = compute_loss()  # CALL
        for parameter in parameters:
            parameter -= lr * parameter.grad
            parameter.grad = None
        return value


    regressor = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    features, targets = torch.randn(10, 4), torch.randn(10, 1)


    def compute_loss():
        loss = (regressor(features) - targets).pow(2).mean()  # LOSS
        loss.backward()
        return loss


    losses = [descend(list(regressor.parameters()), compute_loss).detach() for step in range(3)]
    result = [torch.stack(losses), *[p.detach().clone() for p in regressor.parameters()]]
"""

HAND_UPDATE_BY_HAND = HAND_UPDATE_CALLS_LOSS_FUNCTION.replace(
    "        value = compute_loss()  # CALL", "        with torch.enable_grad():\n            value = compute_loss()")

TRAINER_METHOD_PASSES_BATCH = """
    import torch as th
    from torch import nn

    th.manual_seed(0)


    class MeanTeacher:
        def __init__(self, student, teacher, decay=0.9):
            self.student, self.teacher, self.decay = student, teacher, decay

        @th.no_grad()
        def update(self, loss_of, batch):
            loss = loss_of(batch)  # CALL
            for s, t in zip(self.student.parameters(), self.teacher.parameters()):
                s -= 0.05 * s.grad
                s.grad = None
                t.mul_(self.decay).add_(s, alpha=1 - self.decay)
            return loss


    student = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    teacher = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    teacher.load_state_dict(student.state_dict())
    trainer = MeanTeacher(student, teacher)


    def consistency_loss(batch):
        inputs, labels = batch
        loss = nn.functional.cross_entropy(student(inputs), labels)
        loss.backward()
        return loss


    batch = (th.randn(8, 3), th.randint(0, 2, (8,)))
    losses = [trainer.update(consistency_loss, batch).detach() for step in range(3)]
    result = [th.stack(losses), *[p.detach().clone() for p in student.parameters()],
              *[p.detach().clone() for p in teacher.parameters()]]
"""

TRAINER_BY_HAND = TRAINER_METHOD_PASSES_BATCH.replace(
    "            loss = loss_of(batch)  # CALL", "            with th.enable_grad():\n                loss = loss_of(batch)")


def _same(a, b) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def test_the_call_of_the_given_loss_function_is_named(tmp_path):
    outcome = run_as_script(tmp_path, HAND_UPDATE_CALLS_LOSS_FUNCTION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("CALL")
    assert "descend() calls compute_loss(), the function it was given, with gradients off" in diagnosis.primary.note
    assert {outcome.line("DECORATOR"), outcome.line("LOSS")} <= {location.line for location in diagnosis.related}
    assert diagnosis.help[0].message.startswith("evaluate compute_loss() with gradients on")
    assert diagnosis.help[0].replacement == "with torch.enable_grad():\n    value = compute_loss()"
    assert diagnosis.help[1].message.startswith("or turn gradients on in compute_loss()")


def test_the_call_under_enable_grad_trains_as_written_by_hand(tmp_path):
    outcome = run_as_script(tmp_path, HAND_UPDATE_CALLS_LOSS_FUNCTION)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    by_hand = run_plain(tmp_path, HAND_UPDATE_BY_HAND, "by_hand.py")["result"]
    assert _same(fixed, by_hand)


def test_a_method_call_with_an_argument_is_named_with_the_files_torch_name(tmp_path):
    outcome = run_as_script(tmp_path, TRAINER_METHOD_PASSES_BATCH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("CALL")
    assert diagnosis.help[0].replacement == "with th.enable_grad():\n    loss = loss_of(batch)"
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    by_hand = run_plain(tmp_path, TRAINER_BY_HAND, "by_hand.py")["result"]
    assert _same(fixed, by_hand)


def test_the_hand_written_versions_are_silent(tmp_path):
    for source in (HAND_UPDATE_BY_HAND, TRAINER_BY_HAND):
        outcome = run_program(tmp_path, source, "silent.py")
        assert outcome.error is None and not outcome.diagnoses
