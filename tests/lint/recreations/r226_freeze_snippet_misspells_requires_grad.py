"""The "freeze" snippet of a PyTorch extension for VS Code freezes a
pretrained model with `for param in model.parameters(): param.require_grad
= False`.  `require_grad` (no `s`) is not a tensor attribute PyTorch reads:
the assignment just creates it, every parameter keeps `requires_grad=True`,
and fine-tuning with an optimizer over all the parameters keeps updating
the "frozen" backbone.  Nothing raises.  The fix spells `requires_grad`.
Buggy line: `param.require_grad = False` in `freeze`.
Expected finding: ADL016 there.
Source: https://github.com/SvenBecker/vscode-pytorch/issues/8"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return self.features(x).flatten(1)


class FineTuned(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(4, num_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def freeze(model):
    for param in model.parameters():
        param.require_grad = False  # expect: ADL016


def fine_tune(model, loader, lr=0.1):
    freeze(model.backbone)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for images, labels in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()


def _loader():
    torch.manual_seed(0)
    return [(torch.randn(4, 3, 5, 5), torch.tensor([0, 1, 2, 1]))]


def bug_shows():
    """The frozen backbone's weights change during fine-tuning."""
    torch.manual_seed(1)
    model = FineTuned()
    before = model.backbone.features[0].weight.detach().clone()
    fine_tune(model, _loader())
    return not torch.equal(before, model.backbone.features[0].weight.detach())


def run():
    torch.manual_seed(1)
    fine_tune(FineTuned(), _loader())
