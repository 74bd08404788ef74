"""A Korean blog note on where `optimizer.zero_grad()` belongs: at the start
or at the end of the iteration both work, "as long as it is not placed
between `loss.backward()` and `optimizer.step()`", where it clears the
gradients the step is about to use.  Re-created as a text classifier's
`train_epoch` (model returning loss and logits, optimizer and scheduler
steps) with the clearing moved into exactly that place.  Nothing raises;
the optimizer steps with zero gradients and the weights never move.
Buggy line: `optimizer.zero_grad()` between `loss.backward()` and
`optimizer.step()`.
Source: https://velog.io/@rhss10/기본-optimizer.zerograd는-어디에-넣어주어야-할까"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=16, classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, input_ids, labels):
        logits = self.head(self.embed(input_ids))
        return nn.functional.cross_entropy(logits, labels), logits


def train_epoch(model, train_batch, optimizer, scheduler):
    model.train()
    for x in train_batch:
        loss, logits = model(**x)
        loss.backward()
        optimizer.zero_grad()  # expect: ADL018
        optimizer.step()
        scheduler.step()


def bug_shows():
    """No parameter changes over an epoch."""
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    before = [p.detach().clone() for p in model.parameters()]
    batches = [{"input_ids": torch.randint(0, 50, (4, 6)), "labels": torch.randint(0, 3, (4,))} for _ in range(3)]
    train_epoch(model, batches, optimizer, scheduler)
    return all(torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))
