"""AD214: an optimizer keeps stepping after backward() calls while none of its parameters ever had
a gradient, because every loss was computed from detached copies of them (a learned
initialization whose inner loop starts from `p.detach().requires_grad_()`). Nothing is raised;
the warning names the line that made the copies (the step is related), once. The program that starts from the parameters themselves, and an
optimizer that trained at an earlier step, are silent."""

from __future__ import annotations

from helpers import run_program

LEARNED_INIT_FROM_DETACHED_COPIES = """
    import torch
    from torch import nn
    from torch.func import functional_call

    torch.manual_seed(0)
    net = nn.Linear(2, 1)
    outer = torch.optim.SGD(net.parameters(), lr=0.1)
    for task in range(3):
        x, y = torch.randn(6, 2), torch.randn(6, 1)
        weights = {name: p.detach().requires_grad_() for name, p in net.named_parameters()}  # COPIES
        for _ in range(2):
            inner = ((functional_call(net, weights, (x,)) - y) ** 2).mean()
            grads = torch.autograd.grad(inner, list(weights.values()), create_graph=True)
            weights = {name: w - 0.1 * g for (name, w), g in zip(weights.items(), grads)}
        outer.zero_grad()
        ((functional_call(net, weights, (x,)) - y) ** 2).mean().backward()  # BACKWARD
        outer.step()  # STEP
"""

FROM_THE_PARAMETERS = LEARNED_INIT_FROM_DETACHED_COPIES.replace(
    "p.detach().requires_grad_() for name, p", "p for name, p")


def test_the_steps_that_never_get_a_gradient_are_reported_once(tmp_path):
    outcome = run_program(tmp_path, LEARNED_INIT_FROM_DETACHED_COPIES)
    assert outcome.error is None
    reports = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert len(reports) == 1
    diagnosis = reports[0]
    assert diagnosis.severity == "warning"
    # The line that made the copies is the cut (their leaves got the gradients); the step is related.
    assert diagnosis.primary.line == outcome.line("COPIES")
    assert {outcome.line("STEP"), outcome.line("BACKWARD")} <= {location.line for location in diagnosis.related}
    assert "copies" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement == \
        "weights = {name: p.requires_grad_() for name, p in net.named_parameters()}"


def test_the_inner_loop_started_from_the_parameters_is_silent(tmp_path):
    outcome = run_program(tmp_path, FROM_THE_PARAMETERS)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD214"]


def test_an_optimizer_that_trained_before_is_not_reported_when_later_steps_get_no_gradient(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        net, other = nn.Linear(2, 1), nn.Linear(2, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(4):
            model = net if step == 0 else other  # later steps train the other model only
            opt.zero_grad(set_to_none=True)
            model(torch.randn(3, 2)).pow(2).mean().backward()
            opt.step()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD214"]
