"""Transfer learning in two phases: the backbone is frozen for the head's warm-up, then a
misspelt `requires_grads = True` is meant to unfreeze it for fine-tuning: the backbone never
trains."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def fit(model, batches, epochs=1):
    optimizer = torch.optim.SGD([p for p in model.parameters()], lr=0.1)
    for _ in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


def warm_up_head(model, batches):
    for p in model.backbone.parameters():
        p.requires_grad = False
    fit(model, batches)


def fine_tune(model, batches):
    for p in model.backbone.parameters():
        p.requires_grads = True
    fit(model, batches)


def run():
    torch.manual_seed(0)
    model = Classifier()
    batches = [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(2)]
    warm_up_head(model, batches)
    before = model.backbone[0].weight.detach().clone()
    fine_tune(model, batches)
    return before, model


def bug_shows():
    before, model = run()
    return torch.equal(before, model.backbone[0].weight)
