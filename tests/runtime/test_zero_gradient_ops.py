"""AD219: a sample (torch.normal / bernoulli / poisson) or a rounding whose backward sends zeros,
given to a learned layer. The line is the draw's; a help with code keeps the forward values
bitwise and gives the reference's gradients; the patterns that use these ops correctly stay
silent (tests/runtime/test_false_alarm_patterns.py)."""

import torch

from helpers import apply_help, grads_equal, run_plain, run_program

GATED = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    gate_logits, layer = nn.Linear(4, 4), nn.Linear(4, 2)
    x = torch.randn(6, 4)
    keep = torch.sigmoid(gate_logits(x)).bernoulli()  # DRAW
    layer(x * keep).sum().backward()
    grads = [gate_logits.weight.grad, layer.weight.grad]
"""


def test_a_bernoulli_gate_is_reported_at_the_draw_with_a_straight_through_help(tmp_path):
    outcome = run_program(tmp_path, GATED)
    assert [d.code for d in outcome.diagnoses] == ["AD219"]
    assert outcome.diagnosis.primary.line == outcome.line("DRAW")
    assert bool((outcome.namespace["grads"][0] == 0).all())  # the bug: the gate learns nothing
    fixed = apply_help(outcome)
    assert "torch.sigmoid(gate_logits(x)).bernoulli().detach() + (torch.sigmoid(gate_logits(x))" in fixed
    plain = run_plain(tmp_path, fixed)
    torch.manual_seed(0)
    assert torch.equal(plain["grads"][1], outcome.namespace["grads"][1])  # same forward draw
    assert bool((plain["grads"][0] != 0).any())


def test_a_normal_draw_with_a_float_std_is_reparameterised_with_the_same_values(tmp_path):
    source = """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        encoder, decoder = nn.Linear(4, 2), nn.Linear(2, 4)
        x = torch.randn(8, 4)
        z = torch.normal(mean=encoder(x), std=0.5)  # DRAW
        recon = decoder(z)
        ((recon - x) ** 2).mean().backward()
        values = recon.detach()
        grads = [encoder.weight.grad, decoder.weight.grad]
    """
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD219" and outcome.diagnosis.primary.line == outcome.line("DRAW")
    fixed = apply_help(outcome)
    assert "z = encoder(x) + 0.5 * torch.randn_like(encoder(x))" in fixed
    plain = run_plain(tmp_path, fixed)
    assert torch.equal(plain["values"], outcome.namespace["values"])
    assert torch.equal(plain["grads"][1], outcome.namespace["grads"][1])
    assert bool((plain["grads"][0] != 0).any())


def test_a_poisson_draw_gets_advice_only(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        rate, layer = nn.Linear(3, 3), nn.Linear(3, 1)
        counts = torch.poisson(rate(torch.randn(4, 3)).exp())  # DRAW
        layer(counts).sum().backward()
    """)
    assert outcome.diagnosis.code == "AD219" and outcome.diagnosis.primary.line == outcome.line("DRAW")
    assert all(h.replacement is None for h in outcome.diagnosis.help)
    assert "score-function" in outcome.diagnosis.help[0].message


def test_a_rounding_whose_input_keeps_another_path_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        first, second = nn.Linear(3, 3), nn.Linear(3, 1)
        hidden = first(torch.randn(4, 3))
        second(hidden.sign() * hidden.abs()).sum().backward()
    """)
    assert outcome.diagnoses == [] and outcome.error is None


def test_a_rounded_prediction_in_the_loss_is_reported(tmp_path):
    # No learned op above the rounding, but every parameter below gets its gradient through it.
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        prediction = model(torch.randn(5, 3))
        loss = F.mse_loss(prediction.round(), torch.randn(5, 1))  # ROUND
        loss.backward()
    """)
    assert outcome.diagnosis.code == "AD219" and outcome.diagnosis.primary.line == outcome.line("ROUND")
    # Only the loss reads the rounded value: a loss on the unrounded value and a straight-through
    # rounding both train, differently; neither is offered as the change.
    assert all(help.replacement is None for help in outcome.diagnosis.help)
    assert "take the loss on the value before round()" in outcome.diagnosis.help[0].message


def test_a_duration_loss_through_ceil_gets_advice_and_a_quantised_activation_a_change(tmp_path):
    # DiffSinger's duration loss (https://github.com/openvpi/DiffSinger/pull/303): frames rounded
    # up with ceil, compared in log space; the fix takes the loss on the unrounded durations.
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        predictor = nn.Linear(4, 1)
        log_dur = predictor(torch.randn(6, 4)).squeeze(-1)
        frames = torch.ceil(torch.exp(log_dur) - 1).clamp(min=0)  # CEIL
        F.mse_loss(torch.log1p(frames), torch.log1p(torch.rand(6) * 9)).backward()
    """)
    assert outcome.diagnosis.code == "AD219" and outcome.diagnosis.primary.line == outcome.line("CEIL")
    assert all(help.replacement is None for help in outcome.diagnosis.help)
    quantised = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        first, second = nn.Linear(4, 4), nn.Linear(4, 1)
        hidden = torch.round(first(torch.randn(6, 4)) * 4) / 4  # ROUND
        second(hidden).sum().backward()
    """, name="quantised.py")
    assert quantised.diagnosis.code == "AD219" and quantised.diagnosis.primary.line == quantised.line("ROUND")
    assert quantised.diagnosis.help[0].replacement is not None  # a learned layer reads it: straight-through


def test_a_scale_from_a_floor_beside_the_scaled_value_is_silent(tmp_path):
    # fp8-style scaling: the scale's floor blocks only the scale's own path; x keeps its gradient.
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        first, second = nn.Linear(3, 3), nn.Linear(3, 1)
        x = first(torch.randn(4, 3))
        scale = 2.0 ** torch.floor(torch.log2(x.abs().amax()))
        second(x / scale).sum().backward()
    """)
    assert outcome.diagnoses == [] and outcome.error is None


NOISY_POINTS = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    centres = torch.linspace(0, 1, 16, requires_grad=True)
    optimizer = torch.optim.Adam(OPTIMIZED, lr=1e-2)
    for step in range(3):
        t = torch.normal(mean=centres, std=0.01).reshape(-1, 1)  # DRAW
        u = net(t)
        du = torch.autograd.grad(u, t, torch.ones_like(u), create_graph=True)[0]
        loss = (du - torch.cos(t)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # the output layer's bias gets no gradient: the residual differentiates it away
    grads = [net[0].weight.grad, net[0].bias.grad, net[2].weight.grad] + [p.detach().clone() for p in net.parameters()]
"""


def test_noisy_collocation_points_around_points_that_require_grad_are_silent(tmp_path):
    # neurodiffeq's generators: the points require grad so that the residual can be
    # differentiated with respect to them; nothing below the draw is trained, so the zero
    # gradient the draw sends to `centres` is nobody's loss.
    source = NOISY_POINTS.replace("OPTIMIZED", "net.parameters()")
    for mode in ({}, {"mode": "full"}, {"strict": True}):
        outcome = run_program(tmp_path, source, **mode)
        assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []
    plain = run_plain(tmp_path, source)
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_noisy_points_around_centres_the_optimizer_trains_are_still_reported(tmp_path):
    # The twin: the centres are trained with the network, and the draw sends them zeros.
    outcome = run_program(tmp_path, NOISY_POINTS.replace("OPTIMIZED", "[*net.parameters(), centres]"))
    assert [d.code for d in outcome.diagnoses] == ["AD219"]
    assert outcome.diagnosis.primary.line == outcome.line("DRAW")
