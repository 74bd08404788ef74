"""Structured pruning of a small CNN, then fine-tuning (NNI's pruning + `ModelSpeedup` workflow):
the optimizer is created on the dense model, then the speed-up replaces the pruned convolutions with
smaller `nn.Conv2d` modules holding the kept filters. The fine-tuning loop keeps the old optimizer,
whose parameter list still points at the replaced layers' tensors: the new convolutions get
gradients but are never stepped, only the untouched classifier head trains (no error, the loss even
goes down a little).
Source: https://github.com/microsoft/nni/issues/4521 ("The parameters are not updated when the pruned
model is finetuned"; the maintainer: "`m_speedup.speedup_model()` will replace the layers in the
original model with smaller ones ... So the parameters registered in the optimizer are outdated ...
an easy way is reinitializing a new optimizer"; the reporter: "I solved this problem by redefining an
optimizer").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


def speedup(model, keep):
    """Replace conv1 by one with only the `keep` filters, and conv2 by one reading only them."""
    conv1 = nn.Conv2d(3, len(keep), 3, padding=1)
    conv2 = nn.Conv2d(len(keep), model.conv2.out_channels, 3, padding=1)
    with torch.no_grad():
        conv1.weight.copy_(model.conv1.weight[keep])
        conv1.bias.copy_(model.conv1.bias[keep])
        conv2.weight.copy_(model.conv2.weight[:, keep])
        conv2.bias.copy_(model.conv2.bias)
    model.conv1, model.conv2 = conv1, conv2


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.CrossEntropyLoss()

# Prune half of conv1's filters by L1 norm, then make the model physically smaller.
norms = model.conv1.weight.detach().abs().sum(dim=(1, 2, 3))
keep = norms.argsort(descending=True)[:4].sort().values
speedup(model, keep)

losses = []
for step in range(5):
    images, labels = torch.randn(6, 3, 8, 8), torch.randint(0, 4, (6,))
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
