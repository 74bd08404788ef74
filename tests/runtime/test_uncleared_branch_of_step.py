"""AD209 where the step is in one arm of an if/elif/else whose other arm clears the gradients
(held-out set 21: nwm#16, a world model's bfloat16 path without `opt.zero_grad()` beside the float32
path that has it). The arm's `if`/`elif`/`else` line is the primary location (the path that forgot
the call), and the help calls `zero_grad()` at that arm's start, as the other arm does. Confirmed on
two programs of another shape (an `elif` arm of a precision switch in a function, the `else` arm
of a trainer's method with `self.opt`), each help applied equal to a hand-written version; the
hand-written versions stay silent, and a program that never clears on either path keeps the
older help (before the backward())."""

import torch

from helpers import Outcome, apply_help, marked_line, run_plain, run_program

ELIF = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
x, y = torch.randn(6, 4), torch.randn(6, 1)


def update(precision):
    if precision == "fp32":
        optimizer.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        optimizer.step()
    elif precision == "rounded":  # ARM
        rounded = x.half().float()
        loss = (model(rounded) - y).pow(2).mean()
        loss.backward()
        optimizer.step()
    else:
        raise ValueError(precision)
    return loss.detach()


losses = torch.stack([update("rounded") for _ in range(4)])
params = [p.detach().clone() for p in model.parameters()]
"""
ELIF_ANSWER = ELIF.replace("""        rounded = x.half().float()""", """        optimizer.zero_grad()
        rounded = x.half().float()""")

TRAINER = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)


class Trainer:
    def __init__(self, full_precision):
        self.model = torch.nn.Linear(5, 2)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-2)
        self.full_precision = full_precision

    def step(self, x, y):
        if self.full_precision:
            self.opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.opt.step()
        else:  # ARM
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                out = self.model(x)
            loss = F.mse_loss(out.float(), y)
            loss.backward()
            self.opt.step()
        return loss.detach()


trainer = Trainer(full_precision=False)
x, y = torch.randn(7, 5), torch.randn(7, 2)
losses = torch.stack([trainer.step(x, y) for _ in range(4)])
params = [p.detach().clone() for p in trainer.model.parameters()]
"""
TRAINER_ANSWER = TRAINER.replace("""        else:  # ARM
""", """        else:  # ARM
            self.opt.zero_grad()
""")


def _ad209(outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD209")


def _equal(a, b):
    return torch.equal(a["losses"], b["losses"]) and all(torch.equal(p, q) for p, q in zip(a["params"], b["params"]))


def test_elif_arm_named_and_cleared_at_its_start(tmp_path):
    outcome = run_program(tmp_path, ELIF)
    diagnosis = _ad209(outcome)
    assert diagnosis.primary.line == marked_line(ELIF, "ARM")
    assert diagnosis.help[0].message.startswith("clear the gradients on this path too: call optimizer.zero_grad()")
    fixed = run_plain(tmp_path, apply_help(Outcome(outcome.error, [diagnosis], outcome.namespace, outcome.path, outcome.source)))
    assert _equal(fixed, run_plain(tmp_path, ELIF_ANSWER, "answer.py"))


def test_else_arm_of_a_method(tmp_path):
    outcome = run_program(tmp_path, TRAINER)
    diagnosis = _ad209(outcome)
    assert diagnosis.primary.line == marked_line(TRAINER, "ARM")
    assert "self.opt.zero_grad()" in diagnosis.help[0].message
    fixed = run_plain(tmp_path, apply_help(Outcome(outcome.error, [diagnosis], outcome.namespace, outcome.path, outcome.source)))
    assert _equal(fixed, run_plain(tmp_path, TRAINER_ANSWER, "answer.py"))


def test_the_hand_written_versions_stay_silent(tmp_path):
    for source in (ELIF_ANSWER, TRAINER_ANSWER):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses


def test_no_arm_clears_keeps_the_help_before_backward(tmp_path):
    source = ELIF.replace("        optimizer.zero_grad()\n", "")
    outcome = run_program(tmp_path, source)
    diagnosis = _ad209(outcome)
    assert diagnosis.primary.source == "loss.backward()"
    assert "before it" in diagnosis.help[0].message
