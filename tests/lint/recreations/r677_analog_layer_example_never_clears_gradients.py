"""IBM analog hardware acceleration kit (IBM/aihwkit), issue 446 "Missing zero_grad() call":
the first two examples (`examples/01_simple_layer.py`, `02_multiple_layers.py`) train an analog
layer for a few epochs with `loss.backward(); opt.step()` and never clear the gradients, so each
step applies the sum of every earlier gradient; "on 10 iterations currently the loss decrease
then increase again" (1.03, 0.82, 0.47, 0.20, 0.06, 0.09, 0.28, 0.53, ...), while with
`opt.zero_grad()` added it decreases steadily.  Nothing raises.
Re-created with the example's data, an `AnalogLinear` stand-in (a `Linear` whose forward adds
no device noise) and an `AnalogSGD` with its `regroup_param_groups`.
Buggy line: `opt.step()` in `train` (no `opt.zero_grad()` in the loop).
Source: https://github.com/IBM/aihwkit/issues/446"""
import torch
from torch import Tensor
from torch.nn import Linear
from torch.nn.functional import mse_loss
from torch.optim import SGD


class AnalogLinear(Linear):
    """Stand-in for aihwkit's analog tile layer (ideal device: no noise)."""


class AnalogSGD(SGD):
    def regroup_param_groups(self, model):
        """aihwkit regroups analog tiles here; nothing to regroup for an ideal device."""
        return None


x = Tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = Tensor([[1.0, 0.5], [0.7, 0.3]])


def make():
    torch.manual_seed(0)
    model = AnalogLinear(4, 2, bias=True)
    opt = AnalogSGD(model.parameters(), lr=0.1)
    opt.regroup_param_groups(model)
    return model, opt


def train(epochs=10):
    model, opt = make()
    losses = []
    for epoch in range(epochs):
        pred = model(x)
        loss = mse_loss(pred, y)
        loss.backward()
        opt.step()  # expect: ADL018
        losses.append(loss.item())
    return model, losses


def train_correct(epochs=10):
    model, opt = make()
    losses = []
    for epoch in range(epochs):
        opt.zero_grad()
        loss = mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


def bug_shows():
    """The example's weights are not those of SGD on the loss, and its loss turns back up."""
    model, losses = train()
    ref, ref_losses = train_correct()
    return (not torch.allclose(model.weight, ref.weight)) and losses[-1] > min(losses) \
        and ref_losses[-1] < ref_losses[0]


if __name__ == "__main__":
    print(bug_shows())
