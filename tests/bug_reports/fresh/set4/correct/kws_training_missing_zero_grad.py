"""Keyword-spotting training loop: `optimizer.step()` is called every batch but the gradients are
never zeroed, so each step uses the sum of all gradients so far (no error).
Source: https://github.com/wenet-e2e/wekws/issues/72 (maintainer: "It's a bug"; fixed in
https://github.com/wenet-e2e/wekws/pull/73 by calling `optimizer.zero_grad()` before
`loss.backward()`).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv1d(10, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveMaxPool1d(1), nn.Flatten(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(4, 10, 20), torch.randint(0, 2, (4,))) for _ in range(4)]

losses = []
for feats, target in batches:
    logits = model(feats)
    loss = nn.functional.cross_entropy(logits, target)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 50.0)
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in model.parameters()]}
