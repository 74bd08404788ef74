"""AD301 for `torch.autograd.grad(grads, params)` where the outputs are the parameters' `.grad`
(a Hessian-vector product, Hutchinson's estimate of the Hessian's diagonal): the gradients were left
by a backward() run without `create_graph=True`, so they have no graph and PyTorch raises "element
0 of tensors does not require grad". The report named the `autograd.grad` call with advice only
(held-out set 14, pytorch_optimizer#193: SophiaH after a plain `loss.backward()`); the line to change
is that backward(), and the help passes create_graph=True. This program is another one: a
curvature estimate for a small regression, written in the training loop."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

HUTCHINSON_AFTER_PLAIN_BACKWARD = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    params = list(model.parameters())
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    generator = torch.Generator().manual_seed(1)
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()  # BACKWARD
    probes = [torch.randint(0, 2, p.shape, generator=generator).float() * 2 - 1 for p in params]
    products = torch.autograd.grad([p.grad for p in params], params, grad_outputs=probes)  # GRAD
    result = [(v * hv).detach() for v, hv in zip(probes, products)]
"""

MEANT = HUTCHINSON_AFTER_PLAIN_BACKWARD.replace("loss.backward()  # BACKWARD", "loss.backward(create_graph=True)")


def test_the_backward_without_create_graph_is_named(tmp_path):
    outcome = run_program(tmp_path, HUTCHINSON_AFTER_PLAIN_BACKWARD)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    assert [r.line for r in diagnosis.related] == [outcome.line("GRAD")]
    assert diagnosis.help[0].replacement == "loss.backward(create_graph=True)"


def test_the_help_applied_estimates_as_the_meant_program(tmp_path):
    outcome = run_program(tmp_path, HUTCHINSON_AFTER_PLAIN_BACKWARD)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    meant = run_plain(tmp_path, MEANT, "meant.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, meant))
