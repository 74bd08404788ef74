"""DoRA (weight-decomposed low-rank adaptation) written from scratch (catid/dora, dora.py
`DoRALayer`): the adapted weight is `m * (W + A @ B) / ||W + A @ B||` with the pretrained W frozen,
a trainable magnitude m and low-rank factors A (d_out x r) and B (r x d_in). Both factors were
created with `torch.zeros`, so A @ B is zero and so are the gradients of A and B at every step:
only the magnitude m trains, the direction never changes, and the "DoRA" run is a per-column
rescaling. Nothing is raised.
Source: https://github.com/catid/dora/pull/1 ("Fixes the LoRA initialization which helps with
improving the overall loss": `self.lora_A = nn.Parameter(torch.randn(d_out, rank)*std_dev)` with
std_dev = 1/sqrt(rank), lora_B stays zero; merged).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DoRALayer(nn.Module):
    def __init__(self, d_in, d_out, rank, weight, bias):
        super().__init__()
        self.weight = nn.Parameter(weight, requires_grad=False)
        self.bias = nn.Parameter(bias, requires_grad=False)
        self.m = nn.Parameter(self.weight.norm(p=2, dim=0, keepdim=True))
        self.lora_A = nn.Parameter(torch.zeros(d_out, rank))
        self.lora_B = nn.Parameter(torch.zeros(rank, d_in))

    def forward(self, x):
        adapted = self.weight + self.lora_A @ self.lora_B
        return F.linear(x, self.m * adapted / adapted.norm(p=2, dim=0, keepdim=True), self.bias)


pretrained = nn.Linear(10, 3)
layer = DoRALayer(10, 3, 2, pretrained.weight.detach().clone(), pretrained.bias.detach().clone())
optimizer = torch.optim.AdamW([p for p in layer.parameters() if p.requires_grad], lr=0.01)
inputs = torch.randn(32, 10)
targets = inputs[:, :3].sum(dim=1, keepdim=True).repeat(1, 3)

losses = []
for step in range(5):
    optimizer.zero_grad()
    loss = F.mse_loss(layer(inputs), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in layer.parameters()]}
