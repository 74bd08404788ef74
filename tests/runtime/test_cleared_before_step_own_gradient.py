"""AD153 is not said when the step applies a gradient the program put in `.grad` itself.

Per-client (federated averaging) or per-sample (clipped, differentially private) gradients are
computed one backward() at a time: clear, backward(), read the gradients out, and so on; then the
program assigns the combined gradient (`p.grad = ...`) and steps. The zero_grad() before each
backward() throws nothing away: what it clears was read first, and the step applies the
program's own `.grad`, not the last backward()'s. The held-out variant
`tests/errors/variants/correct/averaged_flat_gradient_assigned_unshaped.py` (federated averaging)
drew AD153 in every mode. The doctor now notes which `.grad` tensor the newest backward() left
on the optimizer's sampled parameter, and a step that finds another one there is not counted as
applying what the backward() sites computed. This program is another one of the same form:
per-sample gradients clipped to a norm and averaged."""

import pytest
import torch

from helpers import run_plain, run_program

PER_SAMPLE_CLIPPED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(2)]
for x, y in data:
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for i in range(len(x)):
        optimizer.zero_grad()
        F.mse_loss(model(x[i:i + 1]), y[i:i + 1]).backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        scale = min(1.0, 0.5 / (float(norm) + 1e-6))
        summed = [s + p.grad * scale for s, p in zip(summed, model.parameters())]
    for p, s in zip(model.parameters(), summed):
        p.grad = s / len(x)
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
"""

# What the program means, without .grad: each sample's gradient by autograd.grad, clipped, averaged.
REFERENCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Linear(4, 1)
params = list(model.parameters())
data = [(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(2)]
for x, y in data:
    summed = [torch.zeros_like(p) for p in params]
    for i in range(len(x)):
        grads = torch.autograd.grad(F.mse_loss(model(x[i:i + 1]), y[i:i + 1]), params)
        norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
        scale = min(1.0, 0.5 / (float(norm) + 1e-6))
        summed = [s + g * scale for s, g in zip(summed, grads)]
    with torch.no_grad():
        for p, s in zip(params, summed):
            p -= 0.1 * s / len(x)
result = [p.detach().clone() for p in params]
"""

# The bug of the same look: the gradients stay autograd's (scaled in place before the step), so the
# zero_grad() at each micro-batch does throw the earlier ones away.
ACCUMULATING_SCALED_IN_PLACE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(2)]
for x, y in data:
    for i in range(len(x)):
        optimizer.zero_grad()  # CLEAR
        F.mse_loss(model(x[i:i + 1]), y[i:i + 1]).backward()  # BACKWARD
    for p in model.parameters():
        p.grad.div_(len(x))
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
"""

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}


def test_the_program_means_what_the_reference_computes(tmp_path):
    ours = run_plain(tmp_path, PER_SAMPLE_CLIPPED)["result"]
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(ours, reference))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_gradient_put_in_grad_by_the_program_is_silent_in_every_mode(tmp_path, mode):
    outcome = run_program(tmp_path, PER_SAMPLE_CLIPPED, **MODES[mode])
    assert outcome.error is None
    assert outcome.diagnoses == []
    assert outcome.warnings == []
    plain = run_plain(tmp_path, PER_SAMPLE_CLIPPED, name="plain.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(outcome.namespace["result"], plain))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_gradients_kept_and_scaled_in_place_are_still_found(tmp_path, mode):
    outcome = run_program(tmp_path, ACCUMULATING_SCALED_IN_PLACE, **MODES[mode])
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    assert diagnosis.primary.line == outcome.line("CLEAR")
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
