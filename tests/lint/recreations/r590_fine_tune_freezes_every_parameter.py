"""An article on "element 0 of tensors does not require grad": one cause it
lists is a model whose parameters all have `requires_grad = False`, so the
output has no graph and `backward()` fails.  Re-created as the fine-tuning
script that produces it: a `Backbone` + `Head` classifier, a
`freeze_backbone` helper meant to freeze the backbone that loops over
`model.parameters()` instead, and the optimizer built over the head's parameters, which the helper froze
too, so the output carries no graph.
Raises at the first backward.
Buggy line: `for param in model.parameters():` / `param.requires_grad =
False` (every parameter frozen, the head's included).
Source: https://duoke360.com/post/35061"""
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU())

    def forward(self, x):
        return self.layers(x)


class Classifier(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(24, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def freeze_backbone(model):
    for param in model.parameters():
        param.requires_grad = False  # missed: no rule (every parameter frozen before training)


def fine_tune(model, loader, epochs=1):
    freeze_backbone(model)
    optimizer = torch.optim.SGD(model.head.parameters(), lr=1e-2)
    criterion = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()


def run():
    torch.manual_seed(0)
    loader = [(torch.randn(8, 12), torch.randint(0, 4, (8,)))]
    fine_tune(Classifier(), loader)
