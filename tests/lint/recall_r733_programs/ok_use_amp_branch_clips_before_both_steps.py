"""The near twin of the two-branch function: both branches clip before their step; the plain
branch's backward and step come later in the text than the AMP branch's step."""
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
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
    return model


def run():
    torch.manual_seed(0)
    return train(nn.Linear(3, 2), [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)])
