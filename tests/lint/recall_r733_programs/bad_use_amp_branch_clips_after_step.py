"""A training function with an AMP branch and a plain branch: the AMP branch clips after
`scaler.step(optimizer)`; the plain branch (written after it) clips before its step."""
import torch
import torch.nn as nn


def train(model, batches, use_amp=True, max_norm=0.01):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y) * 100.0
        if use_amp:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
    return model


def run(use_amp=True):
    torch.manual_seed(0)
    batches = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]
    return train(nn.Linear(3, 2), batches, use_amp=use_amp)


def bug_shows():
    # with the scaler the clip comes too late: the weights differ from the clipped update
    return not torch.allclose(run(use_amp=True).weight, run(use_amp=False).weight, atol=1e-5)
