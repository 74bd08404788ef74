"""An MLP whose hidden layers are built in a loop and kept in a plain Python list, `self.hidden =
[nn.Linear(...), ...]`, next to an output layer assigned as an attribute. `nn.Module` registers
only modules assigned as attributes (or held by `nn.ModuleList`/`nn.Sequential`), so
`model.parameters()` holds the output layer alone: the optimizer steps it, the hidden layers keep
their random initial weights, and the loss barely moves, with no error (the post: "my model didn't
know it had parameters"). The change: `self.hidden = nn.ModuleList([...])`.
Source: https://theflyingbirds.in/blog/pytorch-mysteries-lets-understand-nnmodule-nnparameter-modulelist-sequential-and-the-classic-layers-linear-activations-dropout
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, in_features, hidden_features, depth, out_features):
        super().__init__()
        sizes = [in_features] + [hidden_features] * depth
        self.hidden = nn.ModuleList([nn.Linear(sizes[i], sizes[i + 1]) for i in range(depth)])
        self.out = nn.Linear(hidden_features, out_features)
        self.act = nn.ReLU()

    def forward(self, x):
        for layer in self.hidden:
            x = self.act(layer(x))
        return self.out(x)


model = MLP(4, 16, 2, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(128, 4)
y = (x ** 2).sum(dim=1, keepdim=True)

losses = []
for epoch in range(40):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses),
          "hidden": [p.detach().clone() for layer in model.hidden for p in layer.parameters()],
          "out": [p.detach().clone() for p in model.out.parameters()]}
