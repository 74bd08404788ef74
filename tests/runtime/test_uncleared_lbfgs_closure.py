"""AD180: an L-BFGS closure that calls backward() without clearing the gradients (the zero_grad()
moved out of it, once before step(), as skorch 0.8 did: skorch#636, set 18's tabular case).
L-BFGS evaluates the closure several times per step and reads .grad after each evaluation, so
every evaluation sees the sum of the gradients so far. The closure's def is named, the change
puts `<optimizer>.zero_grad()` at its top, and the changed program trains as the hand-written
version (the clear inside the closure) does. Closures that clear, in either spelling, are
silent."""

import torch

from helpers import apply_help, run_plain, run_program

PROGRAM = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Regressor:
    def __init__(self, module):
        self.module = module
        self.optimizer = torch.optim.LBFGS(module.parameters(), lr=0.5, max_iter=4)

    def train_step(self, x, y):
        OUTER_CLEAR
        def closure():  # CLOSURE
            INNER_CLEAR
            loss = (self.module(x).squeeze(-1) - y).pow(2).mean()
            loss.backward()
            return loss

        return self.optimizer.step(closure)  # STEP


x = torch.randn(32, 4)
y = x @ torch.tensor([1.0, -0.5, 0.2, 0.0]) + 0.05 * torch.randn(32)
net = Regressor(nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1)))
losses = [net.train_step(x, y).detach() for epoch in range(3)]
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.module.parameters()]}
"""


def program(outer: str, inner: str) -> str:
    return PROGRAM.replace("OUTER_CLEAR", outer).replace("INNER_CLEAR", inner)


BUGGY = program("self.optimizer.zero_grad()", "pass")
REFERENCE = program("pass", "self.optimizer.zero_grad()")


def test_closure_without_clear_is_named_and_the_clear_at_its_top_trains_as_the_reference(tmp_path):
    outcome = run_program(tmp_path, BUGGY)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD180"]
    assert diagnosis.primary.line == outcome.line("CLOSURE")
    assert [location.line for location in diagnosis.related] == [outcome.line("STEP")]
    assert "self.optimizer.zero_grad()" in diagnosis.help[0].replacement
    fixed = apply_help(outcome, 0)
    result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    expected = run_plain(tmp_path, REFERENCE, "reference.py")["result"]
    assert torch.equal(result["losses"], expected["losses"])
    assert all(torch.equal(a, b) for a, b in zip(result["params"], expected["params"]))
    # The buggy program's fit differs: the summed gradients are not the gradients.
    buggy = run_plain(tmp_path, BUGGY, "buggy.py")["result"]
    assert not torch.equal(buggy["losses"], expected["losses"])


def test_closures_that_clear_are_silent(tmp_path):
    for outer, inner in [("pass", "self.optimizer.zero_grad()"),
                         ("pass", "self.optimizer.zero_grad(set_to_none=False)"),
                         ("self.optimizer.zero_grad()", "self.module.zero_grad()")]:
        outcome = run_program(tmp_path, program(outer, inner))
        assert outcome.error is None
        assert [d.code for d in outcome.diagnoses] == [], (outer, inner)


def test_one_evaluation_per_step_is_silent(tmp_path):
    # max_iter=1 and no line search: one evaluation per step, nothing is summed.
    outcome = run_program(tmp_path, BUGGY.replace("max_iter=4", "max_iter=1"))
    assert [d.code for d in outcome.diagnoses] == []


def test_a_step_whose_closure_raises_leaves_the_gradient_to_the_collector():
    """A step that raises never reaches the step's end, where the kept state is dropped: what the
    step started with is held by weak reference, so the gradient tensor dies with the user's last
    reference to it."""
    import gc
    import weakref

    import autograd_doctor

    parameter = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.LBFGS([parameter], max_iter=3)
    parameter.grad = torch.zeros(3)
    gradient = weakref.ref(parameter.grad)

    def closure():
        raise RuntimeError("the closure failed")

    with autograd_doctor.watch():
        try:
            optimizer.step(closure)
        except RuntimeError as error:
            assert str(error) == "the closure failed"
        parameter.grad = None
        gc.collect()
        assert gradient() is None
