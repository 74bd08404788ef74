"""AD184: a loss on a gradient taken with create_graph=True differentiates a backward operation
PyTorch has no derivative for (set 20's pytorch#83510, force matching through torch.cdist): "the
derivative for '_cdist_backward' is not implemented" names the backward operation; the line to
change is the user's cdist call. Before, AD140 read '_cdist_backward' as a loss argument that
requires grad and advised writing out a weighted binary cross-entropy. The change computes the
same distances through matrix products, whose backward is differentiable."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

FORCE_MATCHING = """
    import torch
    from torch import nn

    torch.manual_seed(0)

    centres = torch.randn(4, 3) * 4.0
    energy_net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(energy_net.parameters(), lr=0.01)
    for step in range(3):
        positions = torch.randn(6, 3, requires_grad=True)
        distances = torch.cdist(positions, centres)  # CDIST
        (gradient,) = torch.autograd.grad(energy_net(distances).sum(), positions, create_graph=True)
        loss = (gradient + positions).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # BACKWARD
        optimizer.step()
    result = [p.detach().clone() for p in energy_net.parameters()]
"""

THROUGH_MATRIX_PRODUCTS = FORCE_MATCHING.replace(
    "torch.cdist(positions, centres)", 'torch.cdist(positions, centres, compute_mode="use_mm_for_euclid_dist")')

# A loss argument that requires grad is still AD140's.
WEIGHT_REQUIRES_GRAD = """
    import torch
    import torch.nn.functional as F

    p = torch.rand(4, requires_grad=True)
    w = torch.rand(4, requires_grad=True)
    F.binary_cross_entropy(p, torch.ones(4), weight=w).backward()
"""


def test_the_forward_call_is_named(tmp_path):
    outcome = run_as_script(tmp_path, FORCE_MATCHING)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD184"
    assert diagnosis.primary.line == outcome.line("CDIST")
    assert any(location.line == outcome.line("BACKWARD") for location in diagnosis.related)
    # The exact distances first (the norm of the differences), the matrix-product form second.
    assert "torch.linalg.vector_norm(positions.unsqueeze(-2) - centres.unsqueeze(-3), dim=-1)" in diagnosis.help[0].replacement
    assert 'compute_mode="use_mm_for_euclid_dist"' in diagnosis.help[1].replacement
    assert not any("cross-entropy" in h.message for h in diagnosis.help)


def test_the_changed_distances_train_as_the_hand_written_version(tmp_path):
    # The accepted fix is the matrix-product form; the norm of the differences computes the
    # same distances (away from zero, up to rounding).
    outcome = run_as_script(tmp_path, FORCE_MATCHING)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    expected = run_plain(tmp_path, THROUGH_MATRIX_PRODUCTS, "expected.py")["result"]
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(fixed, expected))


def test_a_loss_argument_is_still_ad140(tmp_path):
    outcome = run_as_script(tmp_path, WEIGHT_REQUIRES_GRAD)
    assert outcome.diagnosis.code == "AD140"
