"""`zero_grad()` once per epoch, `step()` once per batch: within an epoch each
step uses the sum of the gradients of every batch so far (found while
measuring precision on held-out repositories; no error is raised).
Source: https://github.com/POSTECH-CVLab/PyTorch-StudioGAN/blob/947b35e9835b/src/worker.py#L1556-L1602"""
import torch
import torch.nn as nn

classifier = nn.Linear(3, 1)
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)


def train(epochs, batches):
    for _ in range(epochs):
        optimizer.zero_grad()
        for images in batches:
            loss = classifier(images).sum()
            loss.backward()
            optimizer.step()  # expect: ADL018


def bug_shows() -> bool:
    """The third batch's step sees three batches' gradients."""
    seen = []
    original_step = optimizer.step

    def recording_step():
        seen.append(classifier.weight.grad.clone())
        original_step()

    optimizer.step = recording_step
    try:
        train(1, [torch.ones(2, 3)] * 3)
    finally:
        optimizer.step = original_step
    single = torch.full((1, 3), 2.0)  # d(sum of outputs)/dW for two rows of ones
    return torch.equal(seen[2], 3 * single)
