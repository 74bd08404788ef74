"""Differentially private training preparation (meta-pytorch/opacus#432, from #431): DP-SGD cannot
use BatchNorm, so the model is "fixed" by a validator that swaps every `BatchNorm2d` for a
`GroupNorm`, but the user passed `model.parameters()` to the optimizer before the fix. The
optimizer keeps stepping the old BatchNorm parameters, which are no longer in the model; the new
GroupNorm weights and biases never change. With Opacus the later `make_private` call failed; here,
as in any plain training loop, nothing raises and the normalisation layers silently stay at their
initial values. The maintainer's answer: call the fix before defining the optimizer.
Source: https://github.com/meta-pytorch/opacus/issues/432
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean(dim=(2, 3)))


def fix_for_privacy(module):
    """Replace every BatchNorm2d by a GroupNorm over the same channels (what a DP validator does)."""
    for name, child in module.named_children():
        if isinstance(child, nn.BatchNorm2d):
            setattr(module, name, nn.GroupNorm(min(4, child.num_features), child.num_features))
        else:
            fix_for_privacy(child)
    return module


model = SmallConvNet()
model = fix_for_privacy(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

images = torch.randn(6, 3, 8, 8)
labels = torch.tensor([0, 1, 2, 3, 0, 1])

losses = []
for step in range(4):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": {k: v.detach().clone() for k, v in model.named_parameters()}}
