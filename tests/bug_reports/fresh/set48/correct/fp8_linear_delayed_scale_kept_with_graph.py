"""Emulated FP8 training of a small feed-forward block (the float8 proof of concept of a
quantization prototype library): each `Float8Linear` keeps the absolute maximum of its input as a
module attribute and, with "delayed scaling", quantizes the next batch's input with the scale
computed from that stored maximum. The maximum is taken with autograd on (`torch.max(torch.abs(x))`
of an activation that requires grad), so the stored value carries the previous batch's graph;
the second `loss.backward()` goes back into it and fails with "Trying to backward through the
graph a second time". The change in the report's pull request: compute the scale statistics
without gradient tracking (`@torch.no_grad()` on the amax/scale helpers).
Source: https://github.com/facebookexperimental/protoquant/pull/25
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

E4M3_MAX_POS = 448.0
EPS = 1e-12


@torch.no_grad()
def tensor_to_amax(x):
    return torch.max(torch.abs(x))


@torch.no_grad()
def amax_to_scale(amax):
    return E4M3_MAX_POS / torch.clamp(amax, min=EPS)


def fake_quantize_e4m3(x, scale):
    # round to a coarse grid in the scaled range, straight-through for the gradient
    scaled = x * scale
    rounded = scaled + (torch.round(scaled * 8.0) / 8.0 - scaled).detach()
    return rounded / scale


class Float8Linear(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.fp8_amax_x = torch.tensor(1.0)

    def forward(self, x):
        # delayed scaling: quantize with the scale of the previous batch, then record this one
        x_scale = amax_to_scale(self.fp8_amax_x)
        self.fp8_amax_x = tensor_to_amax(x)
        x_fp8 = fake_quantize_e4m3(x, x_scale)
        w_fp8 = fake_quantize_e4m3(self.weight, amax_to_scale(tensor_to_amax(self.weight.detach())))
        return nn.functional.linear(x_fp8, w_fp8, self.bias)


class FFN(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = Float8Linear(dim, hidden)
        self.w2 = Float8Linear(hidden, dim)

    def forward(self, x):
        return self.w2(torch.relu(self.w1(x)))


model = FFN(16, 32)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for step in range(4):
    x = torch.randn(8, 16)
    target = torch.randn(8, 16)
    optimizer.zero_grad()
    loss = ((model(x) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": losses, "weights": [p.detach().clone() for p in model.parameters()]}
