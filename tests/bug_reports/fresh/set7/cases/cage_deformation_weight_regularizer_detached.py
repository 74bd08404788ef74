"""Neural cage deformation: the network predicts mean-value-coordinate weights that deform a
shape with its cage; a line added later detaches the weights before they are returned, so the
weight regularizer computed on the returned weights is a constant: whatever its factor, it
changes nothing (no error, the regularizer silently does not train).
Source: https://github.com/yifita/deep_cage/issues/16 ("Why use weights = weights.detach()";
the user: no matter how big mvc_weight is, the result does not change; maintainer: "this line ...
was indeed added later, out of context. I'm going to comment it out").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_POINTS, N_CAGE = 32, 8


class CageWeights(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, N_CAGE))

    def forward(self, points, cage, new_cage):
        weights = F.softmax(self.net(points), dim=-1)
        deformed = weights @ new_cage
        weights = weights.detach()
        return {"deformed": deformed, "weight": weights}


def mvc_reg_loss(weights):
    return (F.relu(-weights) + (weights ** 2)).sum(-1).mean()


model = CageWeights()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
points, cage = torch.rand(N_POINTS, 3), torch.rand(N_CAGE, 3)
new_cage, target = cage + 0.1 * torch.randn(N_CAGE, 3), torch.rand(N_POINTS, 3)
mvc_weight = 10.0
losses = []
for step in range(4):
    outputs = model(points, cage, new_cage)
    loss = F.mse_loss(outputs["deformed"], target) + mvc_reg_loss(outputs["weight"]) * mvc_weight
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
