"""Causes found by held-out variants set 23 (docs/errors.md, "Held-out variants", set 23), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD115: `module.weight.requires_grad = flag` (or `requires_grad_(flag)`) on a weight that a
parametrization or the legacy weight_norm / spectral_norm computes got a help that set the flag of the
parameters it is computed from to the value `flag` had when the line failed (`requires_grad_(False)`):
the changed line then freezes on every call, also where the program unfreezes (a wrong help). The help
keeps the line's own flag expression; an expression with a call is not written twice (legacy
weight_norm has two parameters): no concrete change then."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

TOGGLED_PARAMETRIZED_WEIGHT = """
    import torch
    from torch import nn

    def set_trainable(layer, trainable):
        layer.weight.requires_grad_(trainable)  # FLAG

    torch.manual_seed(0)
    encoder = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4))
    head = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
    for step in range(4):
        set_trainable(encoder, step % 2 == 0)
        x = torch.randn(5, 3)
        loss = head(torch.tanh(encoder(x))).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    g = encoder.parametrizations.weight.original0.detach().clone()
    v = encoder.parametrizations.weight.original1.detach().clone()
    w = head.weight.detach().clone()
"""

TOGGLED_THROUGH_THE_PARAMETRIZATION = TOGGLED_PARAMETRIZED_WEIGHT.replace(
    "layer.weight.requires_grad_(trainable)  # FLAG", "layer.parametrizations.weight.requires_grad_(trainable)  # FLAG")


def test_a_parametrized_weights_flag_keeps_the_expression(tmp_path):
    outcome = run_as_script(tmp_path, TOGGLED_PARAMETRIZED_WEIGHT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD115", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FLAG")
    assert "requires_grad_(trainable)" in (diagnosis.help[0].replacement or ""), diagnosis
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, TOGGLED_THROUGH_THE_PARAMETRIZATION, "correct.py")
    for name in ("g", "v", "w"):
        assert torch.equal(fixed[name], correct[name]), name


def test_the_flag_set_through_the_parametrization_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, TOGGLED_THROUGH_THE_PARAMETRIZATION)
    assert outcome.error is None and not outcome.diagnoses


LEGACY_WEIGHT_NORM_FLAG_FROM_A_CALL = """
    import torch
    from torch import nn

    schedule = iter([True, False])

    torch.manual_seed(0)
    layer = nn.utils.weight_norm(nn.Linear(3, 2))
    for step in range(2):
        layer.weight.requires_grad = next(schedule)  # FLAG
        layer(torch.randn(4, 3)).sum().backward()
"""


def test_a_flag_from_a_call_is_not_written_once_per_parameter(tmp_path):
    outcome = run_as_script(tmp_path, LEGACY_WEIGHT_NORM_FLAG_FROM_A_CALL)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD115", [d.code for d in outcome.diagnoses]
    assert all("next(schedule)" not in (help.replacement or "") for help in diagnosis.help)
    assert all("requires_grad_(False)" not in (help.replacement or "") for help in diagnosis.help)


# AD236: a random direction drawn with another tensor's shape (`torch.randn(out.shape)`, `torch.rand_like(y)`)
# and given to jvp as the tangent of a primal of another number of elements got advice at the jvp call
# only. When the tangent is a name bound, in the jvp call's function, to one random draw (possibly scaled by
# numbers) and the primal's name can be read there, the draw gets the primal's shape.
DIRECTION_DRAWN_LIKE_THE_OUTPUT = """
    import torch

    def field(points):
        return torch.stack([points[:, 0] * points[:, 1], points[:, 2].sin()], dim=1)

    def probe(points, seed):
        values = field(points)
        generator = torch.Generator().manual_seed(seed)
        direction = torch.rand_like(values) - 0.5  # DRAW
        return torch.func.jvp(field, (points,), (direction,))

    points = torch.randn(4, 3)
    out, tangent = probe(points, 2)
"""

DIRECTION_DRAWN_LIKE_THE_INPUT = DIRECTION_DRAWN_LIKE_THE_OUTPUT.replace(
    "torch.rand_like(values) - 0.5  # DRAW", "torch.rand_like(points) - 0.5  # DRAW")


def test_a_direction_drawn_with_another_shape_is_drawn_with_the_primals(tmp_path):
    outcome = run_as_script(tmp_path, DIRECTION_DRAWN_LIKE_THE_OUTPUT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD236", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("DRAW")
    torch.manual_seed(0)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    torch.manual_seed(0)
    correct = run_plain(tmp_path, DIRECTION_DRAWN_LIKE_THE_INPUT, "correct.py")
    assert torch.equal(fixed["out"], correct["out"])
    assert torch.equal(fixed["tangent"], correct["tangent"])


def test_the_direction_drawn_like_its_primal_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, DIRECTION_DRAWN_LIKE_THE_INPUT)
    assert outcome.error is None and not outcome.diagnoses


DIRECTION_SCALED_BY_A_TENSOR = """
    import torch

    def f(x):
        return x.sum(1)

    x = torch.randn(4, 3)
    scale = torch.ones(5)
    direction = torch.randn(5) * scale  # DRAW
    out, tangent = torch.func.jvp(f, (x,), (direction,))
"""


def test_a_direction_shaped_by_a_tensor_gets_no_concrete_change(tmp_path):
    outcome = run_as_script(tmp_path, DIRECTION_SCALED_BY_A_TENSOR)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD236", [d.code for d in outcome.diagnoses]
    assert all(not help.replacement for help in diagnosis.help)
