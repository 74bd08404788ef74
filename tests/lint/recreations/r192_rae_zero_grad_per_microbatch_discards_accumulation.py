"""Representation auto-encoder training (RAE) accumulates gradients over
micro-batches and steps the optimizer every `grad_accum_steps`, but calls
`optimizer.zero_grad(set_to_none=True)` inside the micro-batch loop, before
each backward: every step uses only the last micro-batch's gradient, and
the other micro-batches are computed and thrown away.  Nothing raises; the
reported fix moves `zero_grad()` after `optimizer.step()`.
Buggy line: `optimizer.zero_grad(set_to_none=True)` inside the micro-batch loop.
Expected finding: ADL018 (a clearing between the backward passes of one step).
Source: https://github.com/bytetriper/RAE/issues/67"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyDiT(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 8), nn.SiLU(), nn.Linear(8, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], dim=1))


def train(model, optimizer, loader, grad_accum_steps=2):
    model.train()
    for step, batch in enumerate(loader):
        micro_batches = batch.chunk(grad_accum_steps)
        for micro in micro_batches:
            optimizer.zero_grad(set_to_none=True)  # missed: ADL018
            t = torch.rand(micro.shape[0])
            noise = torch.randn_like(micro)
            x_t = (1 - t[:, None]) * micro + t[:, None] * noise
            loss = F.mse_loss(model(x_t, t), noise - micro) / grad_accum_steps
            loss.backward()
        optimizer.step()


def bug_shows():
    """The step's gradient is the last micro-batch's alone, not the sum over the batch."""
    torch.manual_seed(0)
    model = TinyDiT()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    batch = torch.randn(4, 4)
    torch.manual_seed(1)
    train(model, optimizer, [batch])
    seen = model.net[0].weight.grad.clone()

    reference = TinyDiT()
    reference.load_state_dict(model.state_dict())
    torch.manual_seed(1)
    per_micro = []
    for micro in batch.chunk(2):
        reference.zero_grad()
        t = torch.rand(micro.shape[0])
        noise = torch.randn_like(micro)
        x_t = (1 - t[:, None]) * micro + t[:, None] * noise
        (F.mse_loss(reference(x_t, t), noise - micro) / 2).backward()
        per_micro.append(reference.net[0].weight.grad.clone())
    return torch.allclose(seen, per_micro[-1]) and not torch.allclose(seen, per_micro[0] + per_micro[1])
