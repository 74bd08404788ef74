"""A page on using `optimizer.step()` correctly lists its most common mistake
first: "The step() function applies the gradients, but it doesn't
automatically reset them for the next iteration. ... the new gradients for
the next batch will simply be added to the old ones", with the loop it calls
"What not to do!" (`output = model(data)`, `loss = criterion(output,
target)`, `loss.backward()`, `optimizer.step()`).  Re-created as a small
classifier trainer with `train_epoch` / `fit` methods.  Nothing raises.
Buggy line: `self.optimizer.step()` (no `zero_grad()` in the loop).
Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.optimizer.step"""
import torch
import torch.nn as nn


class ClassifierTrainer:
    def __init__(self, model, lr=0.05):
        self.model = model
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.seen = []

    def train_epoch(self, train_loader):
        self.model.train()
        for data, target in train_loader:
            output = self.model(data)
            loss = self.criterion(output, target)
            g = self.model.weight.grad
            self.seen.append(None if g is None else g.clone())
            loss.backward()
            # Gradients are accumulated here, leading to incorrect updates!
            self.optimizer.step()  # expect: ADL018
        return self.seen

    def fit(self, train_loader, epochs=1):
        for _ in range(epochs):
            self.train_epoch(train_loader)


def bug_shows():
    """Before the second backward .grad still holds the first batch's gradient."""
    torch.manual_seed(0)
    trainer = ClassifierTrainer(nn.Linear(4, 3))
    loader = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(2)]
    trainer.fit(loader)
    return trainer.seen[0] is None and trainer.seen[1].abs().sum().item() > 0
