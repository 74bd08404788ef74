"""AD206: a loss term turned into a Python number (.item(), float()) before it was added trains
nothing; the help (add the tensor) makes the term train, checked against a hand-written loop."""

from __future__ import annotations

import textwrap

import torch

from helpers import apply_help, run_plain, run_program

BUGGY = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    beta = 0.5
    for step in range(3):
        ce = F.cross_entropy(model(x), y)
        reg = beta * model.weight.pow(2).sum().item()  # NUMBER
        loss = ce + reg
        opt.zero_grad()
        loss.backward()  # BACKWARD
        opt.step()
"""


def test_a_term_turned_into_a_number_is_reported_at_its_line(tmp_path):
    outcome = run_program(tmp_path, BUGGY)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert len(outcome.warnings) == 1  # once, not once per iteration
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("NUMBER")
    assert diagnosis.related[0].line == outcome.line("BACKWARD")
    assert diagnosis.help[0].replacement == "reg = beta * model.weight.pow(2).sum()"


def test_the_help_applied_trains_the_term(tmp_path):
    outcome = run_program(tmp_path, BUGGY)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    fixed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)  # the same model, data and loop, written by hand with the penalty as a tensor
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    weight, bias = model.weight.detach().clone(), model.bias.detach().clone()
    for _ in range(3):
        w, b = weight.clone().requires_grad_(), bias.clone().requires_grad_()
        loss = torch.nn.functional.cross_entropy(x @ w.T + b, y) + 0.5 * w.pow(2).sum()
        gw, gb = torch.autograd.grad(loss, [w, b])
        weight, bias = weight - 0.1 * gw, bias - 0.1 * gb
    assert torch.allclose(fixed["model"].weight, weight, atol=1e-6)
    assert torch.allclose(fixed["model"].bias, bias, atol=1e-6)
    buggy = run_plain(tmp_path, textwrap.dedent(BUGGY), "buggy.py")
    assert not torch.allclose(buggy["model"].weight, weight, atol=1e-6)  # the number trained nothing


def test_numbers_used_for_logging_scaling_or_from_constants_are_not_reported(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(5, 3)
        with torch.no_grad():
            baseline = (x @ w).mean()
        for step in range(2):
            out = x @ w
            ce = out.pow(2).mean()
            loss = ce / ce.item() + 0.1 * baseline.item() + float(step)
            print(f"loss {loss.item():.3f}")
            (loss + 0.0).backward()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD206"]


def test_an_accumulated_number_term_is_found_through_plus_equals(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        loss = w.pow(2).sum()
        loss += float(v.abs().sum())  # NUMBER
        loss.backward()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("NUMBER")
    assert diagnosis.help[0].replacement == "loss += v.abs().sum()"
    assert outcome.namespace["v"].grad is None  # what the warning is about
    fixed = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(fixed["v"].grad, fixed["v"].detach().sign())
    assert torch.equal(fixed["w"].grad, 2 * fixed["w"].detach())


def test_a_number_term_is_found_through_minus_equals_in_a_loop_and_a_division(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        torch.manual_seed(0)
        logits = torch.randn(4, 3, requires_grad=True)
        weights = torch.linspace(1.0, 0.5, 4)
        log_probs = torch.log_softmax(logits, 1)
        loss = -0.1 * log_probs.exp().mul(log_probs).sum()
        for t in range(4):
            loss -= log_probs[t, 0].item() * weights[t]  # NUMBER
        loss = loss / 4
        loss.backward()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("NUMBER")
    assert diagnosis.help[0].replacement == "loss -= log_probs[t, 0] * weights[t]"
    fixed = run_plain(tmp_path, apply_help(outcome))
    logits = fixed["logits"].detach().clone().requires_grad_()
    log_probs = torch.log_softmax(logits, 1)
    reference = (-0.1 * log_probs.exp().mul(log_probs).sum() - (log_probs[:, 0] * fixed["weights"]).sum()) / 4
    reference.backward()
    assert torch.allclose(fixed["logits"].grad, logits.grad, atol=1e-6)


def test_a_detached_term_is_reported_and_the_help_trains_it(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        w = torch.randn(3, 3, requires_grad=True)
        critic = nn.Linear(3, 1)
        x, target = torch.randn(5, 3), torch.randn(5, 3)
        fake = x @ w
        adversarial = nn.functional.softplus(-critic(fake).detach()).mean()  # DETACHED
        total = 2.0 * adversarial + (fake - target).pow(2).mean()
        total.backward()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("DETACHED")
    assert "critic(fake).detach() is a tensor cut from the graph" in str(diagnosis)
    assert diagnosis.help[0].replacement == "adversarial = nn.functional.softplus(-critic(fake)).mean()"
    fixed = run_plain(tmp_path, apply_help(outcome))
    w = fixed["w"].detach().clone().requires_grad_()
    fake = fixed["x"] @ w
    critic = fixed["critic"]
    reference = 2.0 * torch.nn.functional.softplus(-critic(fake)).mean() + (fake - fixed["target"]).pow(2).mean()
    reference.backward()
    assert torch.allclose(fixed["w"].grad, w.grad, atol=1e-6)


def test_detached_targets_baselines_and_x_minus_x_detach_are_not_reported(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        G, D = nn.Linear(3, 3), nn.Linear(3, 1)
        bce = nn.BCEWithLogitsLoss()
        x, real = torch.randn(4, 3), torch.randn(4, 3)
        fake = G(x)
        d_loss = bce(D(fake.detach()), torch.zeros(4, 1)) + bce(D(real), torch.ones(4, 1))
        d_loss.backward()
        logp = torch.log_softmax(G(x), 1)[:, 0]
        value = D(real).squeeze(1)
        returns = torch.randn(4)
        advantage = returns - value.detach()
        dice = (logp - logp.detach()).exp() * advantage
        loss = -dice.mean() + (value - returns).pow(2).mean() + logp.sum() - logp.sum().detach()
        loss.backward()
        with torch.no_grad():
            baseline = D(real).mean()
        match = (G(x) - real.detach()).abs().mean() + 0.1 * baseline.item() - baseline.detach()
        match.backward()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD206"], [str(d) for d in outcome.diagnoses]


def test_a_penalty_on_gradients_taken_without_create_graph_is_reported_at_the_grad_call(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        critic = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        real, fake = torch.randn(5, 3), torch.randn(5, 3)
        mixed = (0.5 * real + 0.5 * fake).requires_grad_()
        scores = critic(mixed)
        slopes = torch.autograd.grad(scores.sum(), mixed)[0]  # GRAD
        penalty = 10.0 * ((slopes.norm(2, dim=1) - 1) ** 2).mean()  # TERM
        loss = critic(fake).mean() - critic(real).mean() + penalty
        loss.backward()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("GRAD")
    assert [r.line for r in diagnosis.related][:1] == [outcome.line("TERM")]
    assert diagnosis.help[0].replacement == "slopes = torch.autograd.grad(scores.sum(), mixed, create_graph=True)[0]"
    fixed = run_plain(tmp_path, apply_help(outcome))
    critic, mixed = fixed["critic"], fixed["mixed"]
    params = list(critic.parameters())
    slopes = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)[0]
    reference = (critic(fixed["fake"]).mean() - critic(fixed["real"]).mean()
                 + 10.0 * ((slopes.norm(2, dim=1) - 1) ** 2).mean())
    expected = torch.autograd.grad(reference, params)
    assert all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(params, expected))
    buggy = run_plain(tmp_path, textwrap.dedent(outcome.source), "buggy.py")
    assert not all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(buggy["critic"].parameters(), expected))


REBOUND = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    critic = nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    logged = []
    for step in range(3):
        out = model(x)
        fit = F.mse_loss(out, y)
        adversarial = critic(out).mean()
        adversarial = adversarial.detach().item()  # NUMBER
        loss = fit + 0.5 * adversarial  # ADDED
        opt.zero_grad()
        loss.backward()  # BACKWARD
        opt.step()
        logged.append(adversarial)
"""


def test_a_term_rebound_to_its_own_number_is_reported_and_moved_after_backward(tmp_path):
    outcome = run_program(tmp_path, REBOUND)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("NUMBER")
    assert [r.line for r in diagnosis.related] == [outcome.line("ADDED"), outcome.line("BACKWARD")]
    assert "adversarial requires grad" in diagnosis.notes[0]
    (help_,) = diagnosis.help
    assert (help_.location.line, help_.location.end_line) == (outcome.line("NUMBER"), outcome.line("BACKWARD"))
    assert help_.replacement.splitlines() == [
        "loss = fit + 0.5 * adversarial  # ADDED", "opt.zero_grad()", "loss.backward()  # BACKWARD",
        "adversarial = adversarial.detach().item()  # NUMBER"]
    fixed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)  # the same loop written with the term as a tensor and its number logged after backward
    model, critic = torch.nn.Linear(4, 1), torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    logged = []
    for _ in range(3):
        out = model(x)
        adversarial = critic(out).mean()
        loss = torch.nn.functional.mse_loss(out, y) + 0.5 * adversarial
        opt.zero_grad()
        loss.backward()
        opt.step()
        logged.append(adversarial.item())
    assert fixed["logged"] == logged
    assert torch.equal(fixed["model"].weight, model.weight)
    buggy = run_plain(tmp_path, textwrap.dedent(REBOUND), "buggy.py")
    assert not torch.equal(buggy["model"].weight, model.weight)  # the number trained nothing


def test_a_name_rebound_to_a_number_after_backward_or_made_without_grad_is_not_reported(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn.functional as F
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        total = 0.0
        for step in range(2):
            with torch.no_grad():
                baseline = model(x).mean()
            baseline = baseline.item()
            scale = torch.tensor(2.0)
            scale = float(scale)
            loss = F.mse_loss(model(x), y) + 0.1 * baseline + scale
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss = loss.item()
            total = total + loss
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD206"], [str(d) for d in outcome.diagnoses]


def test_a_rebound_number_read_by_a_call_before_backward_is_reported_without_a_move(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn

        model = nn.Linear(4, 1)
        x = torch.randn(8, 4)
        penalty = model.weight.pow(2).sum()
        penalty = float(penalty)  # NUMBER
        print(f"penalty {penalty:.3f}")
        loss = model(x).pow(2).mean() + penalty
        loss.backward()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("NUMBER")
    assert not diagnosis.help  # moving it after backward() would change what print() shows


NUMPY_TERM = """
    import numpy as np
    import torch

    torch.manual_seed(0)
    encoder = torch.nn.Linear(4, 3)
    x = torch.randn(6, 4)


    def spread_penalty(features):
        centred = features - features.mean(axis=0)
        return np.square(centred).mean()


    features = encoder(x)
    penalty = spread_penalty(features.detach().cpu().numpy())  # NUMPY
    loss = features.pow(2).mean() + 0.1 * penalty
    loss.backward()  # BACKWARD
"""


def test_a_term_computed_with_numpy_from_a_detached_copy_is_reported_at_the_call(tmp_path):
    """`penalty = f(h.detach().cpu().numpy())`: f works on a numpy copy, so the term is a number
    (np.float32, not a Python float) that trains nothing. No change is written (the function itself
    must be written with torch); the help says so, and the report names the line that made the copy."""
    outcome = run_program(tmp_path, NUMPY_TERM)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert diagnosis.primary.line == outcome.line("NUMPY")
    assert "features.detach().cpu().numpy() is a numpy copy of the values" in diagnosis.primary.note
    assert diagnosis.related[-1].line == outcome.line("BACKWARD")
    (help_,) = diagnosis.help
    assert help_.replacement is None
    assert help_.message.startswith("compute this term with torch operations on features itself")
    # What the help describes, written by hand, trains the encoder through the term: the buggy
    # program's gradients are those of the first term alone.
    buggy = run_plain(tmp_path, textwrap.dedent(NUMPY_TERM), "buggy.py")
    torch.manual_seed(0)
    encoder = torch.nn.Linear(4, 3)
    features = encoder(torch.randn(6, 4))
    centred = features - features.mean(dim=0)
    (features.pow(2).mean() + 0.1 * centred.pow(2).mean()).backward()
    assert not torch.allclose(buggy["encoder"].weight.grad, encoder.weight.grad)


def test_a_numpy_value_only_logged_or_computed_without_grad_is_not_reported(tmp_path):
    outcome = run_program(tmp_path, """
        import numpy as np
        import torch

        torch.manual_seed(0)
        encoder = torch.nn.Linear(4, 3)
        x = torch.randn(6, 4)
        features = encoder(x)
        logged = np.abs(features.detach().numpy()).mean()
        scale = np.abs(x.numpy()).mean()
        loss = features.pow(2).mean() * scale
        loss.backward()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD206"]
