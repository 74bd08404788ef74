"""Held-out set 37 (part A)'s cause.

KellerJordan/Muon#54: a Muon-style optimizer's step() gives a parameter without a gradient a zero
one (`p.grad = torch.zeros_like(p)`) and then applies the weight decay to every parameter: the head
the loss does not use shrinks every step, and nothing fails. The doctor said nothing. Now, around
each of an optimizer's first three steps, the parameters that require grad and have no gradient
while others have one are copied before the step and compared after it: a change is AD322. The line
named is the `p.grad = ...` of an `if p.grad is None:` in the optimizer's step() (a user's file),
replaced by `continue`; otherwise the step() call, with advice. Tested on the set-37 case and on
another shape written before the check was run on it (a Lion-style optimizer that reads a missing
gradient as zeros, `grad = p.grad if p.grad is not None else torch.zeros_like(p)`, and decays every
parameter); the hand-written versions (`continue` for a missing gradient), torch.optim's AdamW and a
head frozen with requires_grad=False run silent."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_help, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET37 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set37")
MUON = "a_muon_decays_parameters_that_got_no_gradient.py"

LION_READS_MISSING_GRADIENT_AS_ZEROS = """
    import torch
    import torch.nn as nn

    torch.manual_seed(3)


    class Lion(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1):
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

        @torch.no_grad()
        def step(self):
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    grad = p.grad if p.grad is not None else torch.zeros_like(p)  # MISSING
                    state = self.state[p]
                    if "exp_avg" not in state:
                        state["exp_avg"] = torch.zeros_like(p)
                    exp_avg = state["exp_avg"]
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    update = exp_avg * beta1 + grad * (1 - beta1)
                    p.add_(torch.sign(update), alpha=-group["lr"])
                    exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)


    class AutoEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(10, 6)
            self.reconstruct = nn.Linear(6, 10)
            self.auxiliary = nn.Linear(6, 3)

        def forward(self, x):
            return self.reconstruct(torch.tanh(self.encoder(x)))


    model = AutoEncoder()
    optimizer = Lion(model.parameters(), lr=0.01, weight_decay=1.0)
    data = torch.randn(32, 10)
    for epoch in range(4):
        optimizer.zero_grad()
        loss = ((model(data) - data) ** 2).mean()
        loss.backward()
        optimizer.step()  # STEP

    result = {name: p.detach().clone() for name, p in model.named_parameters()}
"""


def _close(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-6) for k in a)


def test_the_muon_case_is_named_and_its_help_gives_the_correct_version(tmp_path):
    source = open(os.path.join(SET37, "cases", MUON)).read()
    outcome = run_program(tmp_path, source, "muon.py")
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == ["AD322"], [d.code for d in outcome.diagnoses]
    assert outcome.diagnosis.primary.line == 49
    assert outcome.diagnosis.help[0].replacement == "continue"
    fixed = apply_help(outcome)
    correct = run_plain(tmp_path, open(os.path.join(SET37, "correct", MUON)).read(), "correct.py")["result"]
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    assert torch.equal(fixed_result["losses"], correct["losses"])
    assert _close(fixed_result["params"], correct["params"])
    assert not [d for d in run_program(tmp_path, fixed, "fixed_watched.py").diagnoses if d.code == "AD322"]


def test_a_lion_step_reading_a_missing_gradient_as_zeros_is_named_at_the_step(tmp_path):
    program = textwrap.dedent(LION_READS_MISSING_GRADIENT_AS_ZEROS)
    outcome = run_program(tmp_path, program)
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == ["AD322"], [d.code for d in outcome.diagnoses]
    assert outcome.diagnosis.primary.line == outcome.line("STEP")
    assert outcome.diagnosis.help[0].replacement is None
    assert "float32[3, 6]" in " ".join(outcome.diagnosis.notes)
    # The change the advice asks for, written by hand: the auxiliary head keeps its values.
    line = program.splitlines()[outcome.line("MISSING") - 1]
    indent = line[: len(line) - len(line.lstrip())]
    skipped = program.replace(line, f"{indent}if p.grad is None:\n{indent}    continue\n{indent}grad = p.grad")
    outcome_skipped = run_program(tmp_path, skipped, "skipped.py")
    assert outcome_skipped.error is None
    assert not [d for d in outcome_skipped.diagnoses if d.code == "AD322"]
    before = run_plain(tmp_path, program.replace("for epoch in range(4):", "for epoch in range(0):"), "init.py")
    after = run_plain(tmp_path, skipped, "skipped_plain.py")["result"]
    assert torch.equal(after["auxiliary.weight"], before["result"]["auxiliary.weight"])


def test_correct_optimizers_and_frozen_heads_say_nothing(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        trunk, used, unused = nn.Linear(4, 4), nn.Linear(4, 2), nn.Linear(4, 2)
        frozen = nn.Linear(4, 2)
        frozen.requires_grad_(False)
        params = [*trunk.parameters(), *used.parameters(), *unused.parameters(), *frozen.parameters()]
        for optimizer in (torch.optim.AdamW(params, lr=0.1, weight_decay=0.5),
                          torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.5)):
            for step in range(3):
                optimizer.zero_grad()
                loss = used(torch.relu(trunk(torch.randn(8, 4)))).pow(2).mean()
                loss.backward()
                optimizer.step()
        result = [p.detach().clone() for p in params]
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD322"]
