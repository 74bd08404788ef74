"""A signed square-root activation written as `torch.where(x > 0, x.sqrt(), x)` inside a module:
sqrt is computed on the negative inputs too (NaN), where's backward sends them a zero gradient
and sqrt's backward turns it into NaN, so the first layer's gradients are NaN and the step
makes its weights NaN. No error; the loss printed before the step is finite."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SignedSqrt(nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x.sqrt(), x)  # PRIMARY


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
