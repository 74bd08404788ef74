"""PyTorch-YOLOv3's training loop accumulates gradients over
`opt.gradient_accumulations` batches, but tests the remainder itself,
`if batches_done % opt.gradient_accumulations:`, which is true for every batch
that is *not* a multiple: the optimizer steps (and clears) on n - 1 batches
of each n and accumulates only across the multiples.  Nothing raises; the
update schedule is the reverse of the one intended ("Gradient accumulation
should only be calculated once for every n batches").  The fix tests
`batches_done % opt.gradient_accumulations == 0`.
Buggy line: `if batches_done % gradient_accumulations:` in `train`.
Source: https://github.com/eriklindernoren/PyTorch-YOLOv3/pull/313"""
import torch
import torch.nn as nn


class Darknet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)

    def forward(self, imgs, targets):
        out = self.head(imgs)
        return (out - targets).pow(2).mean(), out


def train(model, dataloader, epochs=1, gradient_accumulations=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = []
    for epoch in range(epochs):
        model.train()
        for batch_i, (imgs, targets) in enumerate(dataloader):
            batches_done = len(dataloader) * epoch + batch_i
            loss, outputs = model(imgs, targets)
            loss.backward()
            if batches_done % gradient_accumulations:  # missed: no rule (inverted accumulation test)
                optimizer.step()
                optimizer.zero_grad()
                steps.append(batches_done)
    return steps


def bug_shows():
    """With accumulation over 3 batches, the optimizer steps after batches 1,
    2, 4 and 5 instead of after batches 0 and 3."""
    torch.manual_seed(0)
    loader = [(torch.randn(4, 4), torch.randn(4, 2)) for _ in range(6)]
    return train(Darknet(), loader, gradient_accumulations=3) == [1, 2, 4, 5]
