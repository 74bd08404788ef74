"""pytorch/examples word_language_model's manual SGD: `p.add_(-lr, p.grad)` on a parameter.
Source: https://github.com/pytorch/examples/pull/779 (`p.add_(-lr, p.grad)` raises "a leaf
Variable that requires grad is being used in an in-place operation"; the fix writes through
p.data)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10))
lr = 0.5
data = torch.tensor([1, 2, 3, 4])
targets = torch.tensor([2, 3, 4, 5])
for step in range(2):
    model.zero_grad()
    loss = nn.functional.cross_entropy(model(data), targets)
    loss.backward()
    for p in model.parameters():
        p.add_(p.grad, alpha=-lr)  # PRIMARY
params = [p.detach().clone() for p in model.parameters()]
