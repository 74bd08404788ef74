"""AD305 for an input of torch.autograd.grad written as a slice of the tensor the output was
computed from (set 20's pytorch#120538, an ensemble's stacked parameters): `params["w"][i]` is a
view made in the call, so autograd finds no path to it. A zero gradient for it
(materialize_grads=True) would run and train nothing; the help asks for the gradient with respect
to the whole tensors and indexes it the same way, which gives the slice's gradient."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

PER_MEMBER_SLICES = """
    import torch

    torch.manual_seed(0)

    params = {"w": torch.randn(3, 4, requires_grad=True), "b": torch.zeros(3, requires_grad=True)}
    x = torch.randn(3, 5, 4)
    y = torch.randn(3, 5)
    for step in range(4):
        losses = ((torch.einsum("mnf,mf->mn", x, params["w"]) + params["b"][:, None] - y) ** 2).mean(dim=1)
        w_grads, b_grads = [], []
        for i in range(3):
            w_grad, b_grad = torch.autograd.grad(losses[i], [params["w"][i], params["b"][i]], retain_graph=True)  # GRAD
            w_grads.append(w_grad)
            b_grads.append(b_grad)
        with torch.no_grad():
            params["w"] -= 0.1 * torch.stack(w_grads)
            params["b"] -= 0.1 * torch.stack(b_grads)
    result = [params["w"].detach().clone(), params["b"].detach().clone()]
"""

# The hand-written version: one gradient of the summed (independent) losses for the whole tensors.
WHOLE_TENSORS = PER_MEMBER_SLICES.replace("""        w_grads, b_grads = [], []
        for i in range(3):
            w_grad, b_grad = torch.autograd.grad(losses[i], [params["w"][i], params["b"][i]], retain_graph=True)  # GRAD
            w_grads.append(w_grad)
            b_grads.append(b_grad)
        with torch.no_grad():
            params["w"] -= 0.1 * torch.stack(w_grads)
            params["b"] -= 0.1 * torch.stack(b_grads)""", """        w_grad, b_grad = torch.autograd.grad(losses.sum(), [params["w"], params["b"]])
        with torch.no_grad():
            params["w"] -= 0.1 * w_grad
            params["b"] -= 0.1 * b_grad""")

# A tensor made anew at the call (not a view of one the output used) keeps the old helps.
FRESH_TENSOR = """
    import torch

    w = torch.randn(3, requires_grad=True)
    other = torch.randn(2, 3, requires_grad=True)
    loss = (w * 2).sum()
    torch.autograd.grad(loss, [other[0]])  # GRAD
"""


def test_the_slice_is_named_and_the_gradient_taken_for_the_whole_tensor(tmp_path):
    outcome = run_as_script(tmp_path, PER_MEMBER_SLICES)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD305"
    assert diagnosis.primary.line == outcome.line("GRAD")
    assert "slice made in this call" in diagnosis.primary.note
    assert len(diagnosis.help) == 1  # no materialize_grads: zeros would train nothing
    assert "tuple(gradient[i] for gradient in torch.autograd.grad(losses[i], [params[\"w\"], params[\"b\"]]" \
        in diagnosis.help[0].replacement


def test_the_indexed_whole_gradient_equals_the_hand_written_version(tmp_path):
    outcome = run_as_script(tmp_path, PER_MEMBER_SLICES)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    expected = run_plain(tmp_path, WHOLE_TENSORS, "expected.py")["result"]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(fixed, expected))


def test_a_slice_of_a_tensor_the_output_never_used_keeps_the_other_helps(tmp_path):
    outcome = run_as_script(tmp_path, FRESH_TENSOR)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD305"
    assert "slice made in this call" not in (diagnosis.primary.note or "")
