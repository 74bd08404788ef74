"""AD305 naming a loop that "loads" tensors into a module by rebinding its loop variable
(`for given, own in zip(tensors, model.parameters()): own = given`): the module keeps its own
parameters, so torch.autograd.grad with respect to the given tensors fails. The assignment is the
primary location; the advice (run the module on the tensors with torch.func.functional_call),
written out, gives the gradient of a hand-written oracle."""

from __future__ import annotations

import textwrap

import torch

from helpers import run_as_script

# Sharpness-aware step: the gradient at perturbed weights, "loaded" by rebinding.
PERTURBED = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(5, 2)
    x, y = torch.randn(8, 5), torch.randint(0, 2, (8,))
    perturbed = [(p + 0.05 * torch.randn_like(p)).detach().requires_grad_(True) for p in model.parameters()]
    for p_adv, p in zip(perturbed, model.parameters()):
        p = p_adv  # REBIND
    loss = F.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, perturbed)  # GRAD
"""


def test_the_rebinding_is_named_with_its_advice(tmp_path):
    outcome = run_as_script(tmp_path, PERTURBED)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD305"]
    assert diagnosis.primary.line == outcome.line("REBIND")
    assert "only rebinds the loop variable p: model keeps its own parameters" in diagnosis.primary.note
    assert diagnosis.related[0].line == outcome.line("GRAD")
    assert diagnosis.related[0].note == "the tensors in perturbed are not used to compute the output"
    assert "torch.func.functional_call(model" in diagnosis.help[0].message


def test_the_advice_written_out_gives_the_gradient_at_the_perturbed_weights(tmp_path):
    source = textwrap.dedent(PERTURBED).replace(
        "for p_adv, p in zip(perturbed, model.parameters()):\n    p = p_adv  # REBIND\n", "").replace(
        "F.cross_entropy(model(x), y)",
        "F.cross_entropy(torch.func.functional_call(model, dict(zip([n for n, _ in model.named_parameters()], "
        "perturbed)), (x,)), y)")
    namespace = {}
    exec(compile(source, str(tmp_path / "fixed.py"), "exec"), namespace)
    weight, bias = [p.detach().clone().requires_grad_(True) for p in namespace["perturbed"]]
    x, y = namespace["x"], namespace["y"]
    expected = torch.autograd.grad(torch.nn.functional.cross_entropy(x @ weight.T + bias, y), [weight, bias])
    assert all(torch.allclose(found, want, atol=1e-6) for found, want in zip(namespace["grads"], expected))


def test_a_loop_that_copies_into_the_parameters_is_not_blamed(tmp_path):
    outcome = run_as_script(tmp_path, """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        given = [torch.randn_like(p).requires_grad_(True) for p in model.parameters()]
        with torch.no_grad():
            for g, p in zip(given, model.parameters()):
                p.copy_(g)
        loss = model(torch.randn(4, 3)).sum()
        torch.autograd.grad(loss, given)  # GRAD
    """)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD305"]
    assert diagnosis.primary.line == outcome.line("GRAD")  # the plain report: no rebinding here
