"""Optuna objective that fine-tunes a ResNet with some stages frozen: the
reporter's helper `freeze_layer(model, layer_instance, layer_name,
layer_numbers, freeze=True)` loops over `model_ft.named_modules()`, a model
left over in the notebook's global scope, instead of its `model` argument.
The trial's network is never frozen: every parameter keeps
`requires_grad=True` and the "frozen" stages train (no error; the issue
was closed as a support question, the helper's loop variable is the cause).  Re-created as the helper, a small
ResNet-like model and one trial's training step; `bug_shows()` is True when
a stage the trial asked to freeze still changes.
Buggy line: `for name, layer in model_ft.named_modules():` in `freeze_layer`.
Source: https://github.com/optuna/optuna/issues/3855"""
import torch
import torch.nn as nn


class ResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(self.layer2(self.layer1(x)).mean((2, 3)))


model_ft = ResNetLike()  # the notebook's earlier model, still in scope


def freeze_layer(model, layer_instance, layer_name, layer_numbers, freeze=True):
    for name, layer in model_ft.named_modules():  # missed: no rule (a helper freezes a global model instead of its argument)
        for layer_number in layer_numbers:
            layer_id = "%s%d" % (layer_name, layer_number)
            if isinstance(layer, layer_instance) and name.startswith(layer_id):
                for param in layer.parameters():
                    param.requires_grad_(not freeze)
    return model


def objective_step(seed=0):
    torch.manual_seed(seed)
    model = freeze_layer(ResNetLike(), nn.Conv2d, "layer", [1], True)
    before = model.layer1[0].weight.detach().clone()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return before, model.layer1[0].weight.detach()


def bug_shows():
    before, after = objective_step()
    return not torch.equal(before, after)
