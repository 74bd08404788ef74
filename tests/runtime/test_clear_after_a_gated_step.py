"""AD153 when the zero_grad() already follows the step() in the loop, but runs at every
micro-batch while the step before it applies the gradients only at some: the step is gated (by an
`if` on the micro-batch's index, or inside an accumulating wrapper of the optimizer, as
accelerate's `AcceleratedOptimizer`), the clear is not. Held-out set 14's alpaca_farm#58
(`self.policy.zero_grad()` after an accelerate optimizer's `step()`) got advice only. The right
change puts the clear under the step's gate: inside the `if`, right after the step; through the
wrapper (`wrapper.zero_grad()`), whose own zero_grad() is gated as its step() is. These programs
are new shapes of that cause: a speech model trained by a class whose accumulating wrapper is an
attribute (`self.accumulator`), and a regression loop in a helper function with an `if`-gated step
followed by the model's zero_grad()."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

WRAPPER_GATED_STEP = textwrap.dedent("""
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class GradientAccumulator:
        \"\"\"Steps and clears the optimizer once every `every` calls.\"\"\"

        def __init__(self, optimizer, every):
            self.optimizer = optimizer
            self.every = every
            self.calls = 0

        def step(self):
            self.calls += 1
            if self.calls % self.every == 0:
                self.optimizer.step()

        def zero_grad(self, set_to_none=True):
            if self.calls % self.every == 0:
                self.optimizer.zero_grad(set_to_none=set_to_none)


    class KeywordSpotter(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(1, 4, 5, stride=2)
            self.head = nn.Linear(4, 3)

        def forward(self, waveform):
            return self.head(F.relu(self.conv(waveform)).mean(dim=-1))


    class Trainer:
        def __init__(self):
            self.net = KeywordSpotter()
            self.accumulator = GradientAccumulator(torch.optim.SGD(self.net.parameters(), lr=0.1), every=2)

        def train(self, clips, labels):
            for clip, label in zip(clips, labels):
                loss = F.cross_entropy(self.net(clip), label) / 2
                loss.backward()  # BACKWARD
                self.accumulator.step()
                self.net.zero_grad(set_to_none=False)  # CLEAR


    trainer = Trainer()
    clips = torch.randn(6, 3, 1, 32)
    labels = torch.randint(0, 3, (6, 3))
    trainer.train(clips, labels)
    result = [p.detach().clone() for p in trainer.net.parameters()]
""")

WRAPPER_REFERENCE = WRAPPER_GATED_STEP.replace(
    "self.net.zero_grad(set_to_none=False)  # CLEAR", "self.accumulator.zero_grad(set_to_none=False)  # CLEAR")

IF_GATED_STEP = textwrap.dedent("""
    import torch
    from torch import nn

    torch.manual_seed(0)


    def fit(model, optimizer, inputs, targets, accumulation):
        for index in range(len(inputs)):
            loss = (model(inputs[index]) - targets[index]).pow(2).mean() / accumulation
            loss.backward()  # BACKWARD
            if (index + 1) % accumulation == 0:
                optimizer.step()
            model.zero_grad()  # CLEAR


    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    inputs, targets = torch.randn(8, 4, 5), torch.randn(8, 4, 1)
    fit(model, optimizer, inputs, targets, accumulation=4)
    result = [p.detach().clone() for p in model.parameters()]
""")

IF_REFERENCE = IF_GATED_STEP.replace("""            optimizer.step()
        model.zero_grad()  # CLEAR
""", """            optimizer.step()
            model.zero_grad()  # CLEAR
""")


def _only_ad153(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    return diagnosis


def test_a_clear_after_a_wrapper_step_goes_through_the_wrapper(tmp_path):
    outcome = run_program(tmp_path, WRAPPER_GATED_STEP)
    assert outcome.error is None
    diagnosis = _only_ad153(outcome)
    assert diagnosis.primary.line == outcome.line("CLEAR")
    (help_,) = diagnosis.help
    assert help_.message == ("clear the gradients when step() applies them: clear through "
                             "self.accumulator, whose zero_grad() runs when its step() does")
    assert help_.replacement == "self.accumulator.zero_grad(set_to_none=False)"
    fixed = apply_replacement(WRAPPER_GATED_STEP, help_.location, help_.replacement)
    assert fixed == WRAPPER_REFERENCE
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference = run_plain(tmp_path, WRAPPER_REFERENCE, "reference.py")["result"]
    buggy = run_plain(tmp_path, WRAPPER_GATED_STEP, "buggy.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed_result, reference))
    assert not all(torch.allclose(a, b) for a, b in zip(buggy, reference))
    assert not [d for d in run_program(tmp_path, fixed, "fixed_watched.py").diagnoses if d.code == "AD153"]


def test_a_clear_after_an_if_gated_step_moves_under_the_if(tmp_path):
    outcome = run_program(tmp_path, IF_GATED_STEP)
    assert outcome.error is None
    diagnosis = _only_ad153(outcome)
    assert diagnosis.primary.line == outcome.line("CLEAR")
    (help_,) = diagnosis.help
    assert help_.message == ("clear the gradients only after step() has applied them: move this zero_grad() "
                             f"right after the step() on line {outcome.line('CLEAR') - 1}, under its condition")
    fixed = apply_replacement(IF_GATED_STEP, help_.location, help_.replacement)
    assert fixed == IF_REFERENCE
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference = run_plain(tmp_path, IF_REFERENCE, "reference.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed_result, reference))
    assert not [d for d in run_program(tmp_path, fixed, "fixed_watched.py").diagnoses if d.code == "AD153"]
