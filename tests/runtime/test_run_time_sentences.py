"""What a report says happened at run time did happen: notes about optimizer steps come
from the step() calls the doctor saw, not from a search of the source."""

import torch

from helpers import run_plain, run_program, apply_help

TWICE = """
    import torch
    w = torch.randn(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    warmup = {warmup}
    y = torch.sigmoid(w * 2)
    loss = y.sum()
    loss.backward()  # FIRST
    if warmup:
        opt.step()
    loss.backward()  # SECOND
"""

STEP_NOTE = "an optimizer step() runs between the two backward() calls"


def test_a_step_in_a_branch_that_did_not_run_is_not_mentioned(tmp_path):
    outcome = run_program(tmp_path, TWICE.format(warmup=False))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert not any(STEP_NOTE in note for note in diagnosis.notes)
    # No step ran, so keeping the graph is a valid change: applied, the program runs and
    # the two backward() calls add up the same gradient twice.
    first = diagnosis.help[0]
    assert first.message.startswith("if both backward passes")
    assert first.replacement == "loss.backward(retain_graph=True)"
    assert first.location.line == outcome.line("FIRST")
    namespace = run_plain(tmp_path, apply_help(outcome))
    w = namespace["w"].detach()
    expected = 2 * (2 * torch.sigmoid(w * 2) * (1 - torch.sigmoid(w * 2)))
    assert torch.allclose(namespace["w"].grad, expected)


def test_a_step_that_ran_between_the_calls_is_mentioned(tmp_path):
    outcome = run_program(tmp_path, TWICE.format(warmup=True))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert any(STEP_NOTE in note for note in diagnosis.notes)
    assert not any("retain_graph=True" in (h.replacement or "") for h in diagnosis.help)


# A DCGAN-style loop with the generator's forward through the discriminator computed
# before the discriminator's step (BUGGY), and the PyTorch DCGAN example's order (CORRECT).
DCGAN = """
    import torch
    from torch import nn

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())

        def forward(self, x):
            return self.main(x)  # SAVE

    torch.manual_seed(0)
    netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
    netD = Discriminator()
    criterion = nn.BCELoss()
    optD = torch.optim.Adam(netD.parameters(), lr=1e-2)
    optG = torch.optim.Adam(netG.parameters(), lr=1e-2)
    real = torch.randn(5, 6)
    ones, zeros = torch.ones(5, 1), torch.zeros(5, 1)
    for iteration in range(3):
        netD.zero_grad()
        errD_real = criterion(netD(real), ones)
        errD_real.backward()
        fake = netG(torch.randn(5, 4))
        errD_fake = criterion(netD(fake.detach()), zeros)
        errD_fake.backward()
{order}
        netG.zero_grad()
        errG = criterion(output, ones)
        errG.backward()  # BACKWARD
        optG.step()
    state = [p.detach().clone() for p in [*netD.parameters(), *netG.parameters()]]
    grads = [p.grad.clone() for p in [*netD.parameters(), *netG.parameters()]]
"""
BUGGY_ORDER = "    output = netD(fake)  # FORWARD\n    optD.step()  # STEP"
CORRECT_ORDER = "    optD.step()\n    output = netD(fake)"


def _dcgan(order: str) -> str:
    return DCGAN.format(order="\n".join("    " + line for line in order.splitlines()))


def test_gan_help_computes_the_forward_again_after_the_step(tmp_path):
    for mode in ({}, {"mode": "full"}):
        outcome = run_program(tmp_path, _dcgan(BUGGY_ORDER), **mode)
        diagnosis = outcome.diagnosis
        assert diagnosis.code == "AD103"
        assert diagnosis.primary.line == outcome.line("STEP")
        # The forward line, the one to change, is shown (the save is inside the module).
        forward = [loc for loc in diagnosis.related if loc.role == "forward"]
        assert [loc.line for loc in forward] == [outcome.line("FORWARD")]
        # Stepping after errG.backward() would train the discriminator on errG: not offered.
        assert not any("only after the last backward()" in h.message for h in diagnosis.help)
        assert diagnosis.help[0].replacement == "optD.step()  # STEP\noutput = netD(fake)"
        # Oracle: the fixed program trains exactly as the DCGAN example's order does.
        fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
        correct = run_plain(tmp_path, _dcgan(CORRECT_ORDER), "correct.py")
        assert all(torch.equal(a, b) for a, b in zip(fixed["state"], correct["state"]))
        assert all(torch.equal(a, b) for a, b in zip(fixed["grads"], correct["grads"]))


def test_single_loss_step_before_backward_keeps_the_step_after_backward_help(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(2, 3)
        for step in range(3):
            opt.zero_grad(set_to_none=False)
            loss = model(x).pow(2).mean()
            opt.step()  # STEP
            loss.backward()  # the same loss's backward, one iteration late, fed the step
    """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103"
    assert diagnosis.help[0].message.startswith("call opt.step() only after the last backward()")
    assert not any(loc.role == "forward" for loc in diagnosis.related)


def _helps_that_run(tmp_path, outcome) -> list[str]:
    """Every help with a code change, applied to the program and run without the doctor."""
    applied = []
    for index, suggestion in enumerate(outcome.diagnosis.help):
        if suggestion.replacement:
            run_plain(tmp_path, apply_help(outcome, index), f"fixed_{index}.py")  # raises if it does not run
            applied.append(suggestion.replacement)
    return applied


def test_a_tuple_held_in_a_variable_gets_no_per_dimension_rewrite(tmp_path):
    # `index` is (Ellipsis, 1) at run time: select_scatter(value, 0, index) would not run.
    outcome = run_program(tmp_path, """
        import torch
        buffer = torch.zeros(4, 3, 4)
        weight = torch.randn(3, requires_grad=True)
        mix = buffer[..., :2] * weight[:, None]
        index = (..., 1)
        buffer.data[index] = 1.0  # WRITE
        mix.sum().backward()
    """, mode="full")
    assert outcome.diagnosis.code == "AD201"
    assert not any("select_scatter" in (h.replacement or "") or "index_fill" in (h.replacement or "")
                   for h in outcome.diagnosis.help)
    _helps_that_run(tmp_path, outcome)


def test_an_integer_position_still_gets_select_scatter(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, 4, requires_grad=True)
        h = torch.sigmoid(x)
        row = torch.ones(4)
        i = 1
        h[i] = row  # WRITE
        h.sum().backward()
    """)
    assert outcome.diagnosis.code == "AD101"
    assert outcome.diagnosis.help[0].replacement == "h = h.select_scatter(row, 0, i)"
    assert _helps_that_run(tmp_path, outcome)
