"""Multi-task learning with loss weighting (FAMO): the task losses are combined, then the gradient
norm is clipped with `clip_grad_norm_` before `loss.backward()`, so the clipping acts on the
zeroed gradients and the step uses the unclipped ones (no error).
Source: https://github.com/Cranial-XIX/FAMO/issues/4 ("Why should clip_grad_norm_ before
loss.backward()?"; author: "thanks for catching this bug, it should be after").
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
shared = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
heads = nn.ModuleList([nn.Linear(16, 1), nn.Linear(16, 1)])
params = [*shared.parameters(), *heads.parameters()]
optimizer = torch.optim.SGD(params, lr=0.1)
task_logits = torch.zeros(2, requires_grad=True)
x, targets = torch.randn(16, 6), [torch.randn(16, 1) * 5, torch.randn(16, 1)]

history = []
for _ in range(3):
    feats = shared(x)
    task_losses = torch.stack([(head(feats) - t).pow(2).mean() for head, t in zip(heads, targets)])
    weights = torch.softmax(task_logits, 0).detach()
    loss = (weights * task_losses).sum()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
    history.append(task_losses.detach())
result = {"task_losses": history, "params": [p.detach() for p in params]}
