"""A `with torch.no_grad():` block inside the code a loss is computed through, reading a tensor
that requires grad (set 14's YourTTS speaker encoder and diff-ae sampler were the held-out cases;
these programs are others of the same cause).

- Silent: a frozen module (a perceptual or speaker-embedding network) whose forward reads its
  input under no_grad: the loss term it computes is a constant, trains nothing, and nothing
  raises. AD206 names the block; the help runs its body with gradients on.
- Raising: a training step through a helper whose whole result is computed and returned under
  no_grad (a sampling loop of several statements): AD301's help now writes the block's body
  with gradients on, not only advice.
Applied, each help gives the program the version without the block computes."""

from __future__ import annotations

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import apply_help, run_plain, run_program

PERCEPTUAL_TERM_READ_UNDER_NO_GRAD = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class FeatureNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(1, 4, 5, padding=2)

        def forward(self, signal):
            with torch.no_grad():  # BLOCK
                normalised = (signal - signal.mean(-1, keepdim=True)).unsqueeze(1)
            return torch.tanh(self.conv(normalised)).mean(-1)


    decoder = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 32))
    features = FeatureNet()
    features.requires_grad_(False)
    optimizer = torch.optim.SGD(decoder.parameters(), lr=0.1)
    codes, target = torch.randn(5, 3), torch.randn(5, 32)
    for step in range(3):
        optimizer.zero_grad()
        output = decoder(codes)
        perceptual = F.mse_loss(features(output), features(target))  # TERM
        loss = F.l1_loss(output, target) + 2.0 * perceptual
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in decoder.parameters()]
"""

INTENDED_PERCEPTUAL = PERCEPTUAL_TERM_READ_UNDER_NO_GRAD.replace(
    "            with torch.no_grad():  # BLOCK\n                normalised =", "            normalised =")

SAMPLER_RETURNS_UNDER_NO_GRAD = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    step_net = nn.Linear(4, 4)
    step_net.requires_grad_(False)


    def unroll(state, drive, steps):
        with torch.no_grad():  # BLOCK
            for _ in range(steps):
                state = state + 0.1 * torch.tanh(step_net(state) + drive)
            return state


    drive = torch.zeros(2, 4, requires_grad=True)
    optimizer = torch.optim.Adam([drive], lr=0.05)
    start, goal = torch.randn(2, 4), torch.randn(2, 4)
    for step in range(3):
        optimizer.zero_grad()
        loss = ((unroll(start, drive, 4) - goal) ** 2).mean()
        loss.backward()
        optimizer.step()
    result = [drive.detach().clone()]
"""

INTENDED_SAMPLER = SAMPLER_RETURNS_UNDER_NO_GRAD.replace("""        with torch.no_grad():  # BLOCK
            for _ in range(steps):
                state = state + 0.1 * torch.tanh(step_net(state) + drive)
            return state
""", """        for _ in range(steps):
            state = state + 0.1 * torch.tanh(step_net(state) + drive)
        return state
""")


def test_a_term_computed_by_a_frozen_module_that_reads_its_input_under_no_grad_is_named(tmp_path):
    outcome = run_program(tmp_path, PERCEPTUAL_TERM_READ_UNDER_NO_GRAD)
    assert outcome.error is None
    terms = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert terms, [d.code for d in outcome.diagnoses]
    diagnosis = terms[0]
    assert diagnosis.primary.line == outcome.line("BLOCK")
    assert outcome.line("TERM") in {location.line for location in diagnosis.related}
    assert "FeatureNet.forward()" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == (
        "normalised = (signal - signal.mean(-1, keepdim=True)).unsqueeze(1)")


def test_the_block_removed_trains_the_decoder_through_the_term_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, PERCEPTUAL_TERM_READ_UNDER_NO_GRAD)
    help = next(d for d in outcome.diagnoses if d.code == "AD206").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help.location, help.replacement), "fixed.py")
    intended = run_plain(tmp_path, INTENDED_PERCEPTUAL, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, outcome.source, "original.py")
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], intended["result"]))


def test_a_frozen_module_given_data_under_no_grad_or_a_trained_module_says_nothing(tmp_path):
    # A teacher that reads only data under no_grad (a distillation target), and a module whose own
    # parameters train although its forward normalises its input under no_grad: the terms carry
    # a gradient or were never meant to, and neither is this cause.
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)


        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(4, 4)

            def forward(self, x):
                with torch.no_grad():
                    scale = x.abs().max()
                return self.linear(x / scale)


        teacher, student, head = Scaled(), nn.Linear(4, 4), Scaled()
        teacher.requires_grad_(False)
        optimizer = torch.optim.SGD([*student.parameters(), *head.parameters()], lr=0.1)
        x = torch.randn(6, 4)
        for step in range(2):
            optimizer.zero_grad()
            hidden = student(x)
            loss = F.mse_loss(hidden, teacher(x)) + head(hidden).pow(2).mean()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []


def test_a_helper_returning_its_whole_result_under_no_grad_gets_the_block_written_with_gradients_on(tmp_path):
    outcome = run_program(tmp_path, SAMPLER_RETURNS_UNDER_NO_GRAD)
    assert outcome.error is not None
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == outcome.line("BLOCK")
    assert diagnosis.help[0].replacement == (
        "for _ in range(steps):\n"
        "    state = state + 0.1 * torch.tanh(step_net(state) + drive)\n"
        "return state")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED_SAMPLER, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
