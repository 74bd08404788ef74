import torch
import torch.nn as nn

torch.manual_seed(0)


class SignedSqrt(nn.Module):
    def forward(self, x):
        return torch.where(x > 0, torch.where(x > 0, x, torch.ones_like(x)).sqrt(), x)


model = nn.Sequential(nn.Linear(5, 12), SignedSqrt(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs, target = torch.randn(16, 5), torch.randn(16, 1)
losses = []
for _ in range(2):
    loss = (model(inputs) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
# NaN compared as a number (NaN != NaN): 7.0 stands for it
result = [t.nan_to_num(7.0) for t in [*losses, *[p.detach().clone() for p in model.parameters()]]]
