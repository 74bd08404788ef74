"""The same graph ODE with the author's fix: the line that reassigned the orthogonalised matrix to
`self.w` is deleted; `w` stays a trained parameter without the orthogonality step.
Source: https://github.com/square-coder/STGODE/issues/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NODES, FEATURES, BATCH, STEPS, DT = 5, 4, 3, 4, 0.25

adjacency = torch.rand(NODES, NODES)
adjacency = adjacency / adjacency.sum(dim=1, keepdim=True)
inputs = torch.randn(BATCH, NODES, FEATURES)
targets = torch.randn(BATCH, NODES, FEATURES)


class ODEFunc(nn.Module):
    def __init__(self, adjacency, x0):
        super().__init__()
        self.adj = adjacency
        self.x0 = x0
        self.alpha = nn.Parameter(0.8 * torch.ones(NODES))
        self.beta = 0.6
        self.w = nn.Parameter(torch.eye(FEATURES) + 0.1 * torch.randn(FEATURES, FEATURES))
        self.d = nn.Parameter(torch.ones(FEATURES))

    def forward(self, t, x):
        alpha = torch.sigmoid(self.alpha).view(1, NODES, 1)
        xa = torch.einsum("ij,bjf->bif", self.adj, x)
        d = torch.clamp(self.d, min=0, max=1)
        w = (self.w * d) @ self.w.t()
        xw = torch.einsum("bnf,fg->bng", x, w)
        return alpha / 2 * xa - x + xw - x + self.x0


class ODEBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.func = ODEFunc(adjacency, None)
        self.readout = nn.Linear(FEATURES, FEATURES)

    def forward(self, x):
        self.func.x0 = x
        h = x
        for step in range(STEPS):
            h = h + DT * self.func(step * DT, h)
        return self.readout(F.relu(h))


model = ODEBlock()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

losses = []
for epoch in range(10):
    optimizer.zero_grad()
    loss = F.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
