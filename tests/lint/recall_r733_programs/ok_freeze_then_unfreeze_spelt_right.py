"""The near twin: frozen for the warm-up, unfrozen with the right spelling for fine-tuning."""
import torch
import torch.nn as nn


def warm_up_then_fine_tune(model, batches):
    for p in model[0].parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    for p in model[0].parameters():
        p.requires_grad = True
    return model


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    return warm_up_then_fine_tune(model, [(torch.randn(4, 3), torch.randn(4, 2))])
