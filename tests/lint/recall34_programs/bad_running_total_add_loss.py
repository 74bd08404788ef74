"""Fresh shape (recall34, ADL023 through an in-place add on a name): an epoch function keeps
its running loss in a tensor created before the loop and adds each loss with `.add_`."""
import torch
import torch.nn as nn


def train_epoch(model, optimizer, batches):
    running = torch.zeros(())
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running.add_(loss)
    return running / len(batches)


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    return train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), batches)


def bug_shows():
    return run().grad_fn is not None
