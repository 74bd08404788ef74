"""Fresh shape of cause 4 of r763 (ADL009: losses gathered by a list comprehension and copied
by `torch.tensor`).  Source: https://github.com/kirchner-jan/loom_to_pairs/blob/8fa5276252c795737c4f6b8e553e30de3988bc25/train_reward_model.py,
re-written in my own words as a multi-head trainer would write it: `MultiHeadTrainer.step`
computes one loss per head, `self.criterion(head(features), y)` for every head of
`self.model.heads`, inside a list comprehension, and averages
`torch.tensor([...], requires_grad=True)`.  The tensor is a new leaf: the backward reaches
none of the model's parameters, and the optimizer never moves them.
Nothing raises: `bug_shows()` shows the parameters unchanged after training.
Buggy line: the `torch.tensor([...])` of the comprehension."""
import torch
import torch.nn as nn


class MultiHeadNet(nn.Module):
    def __init__(self, size=6, hidden=8, tasks=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(size, hidden), nn.Tanh())
        self.heads = nn.ModuleList(nn.Linear(hidden, 1) for _ in range(tasks))

    def forward(self, x):
        return self.trunk(x)


class MultiHeadTrainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def step(self, x, targets):
        self.optimizer.zero_grad()
        features = self.model(x)
        task_losses = torch.tensor([self.criterion(head(features), targets[:, i:i + 1])  # expect: ADL009
                                    for i, head in enumerate(self.model.heads)], requires_grad=True)
        loss = task_losses.mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    model = MultiHeadNet()
    before = [p.detach().clone() for p in model.parameters()]
    trainer = MultiHeadTrainer(model)
    for _ in range(3):
        trainer.step(torch.randn(5, 6), torch.randn(5, 3))
    return before, list(model.parameters())


def bug_shows():
    before, after = run()
    return all(torch.equal(b, a) for b, a in zip(before, after))
