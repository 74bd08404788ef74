"""A fully convolutional segmentation network trained with `LogSoftmax(dim=1)` and an `NLLLoss`
that does not reduce (`reduce=False` in the report, `reduction="none"` today): the loss is a
(batch, height, width) map of per-pixel losses, and `loss.backward()` on it fails because the
gradient can be implicitly created only for a scalar.
Source: https://github.com/pytorch/pytorch/issues/6166 ("3D loss from Fully Convolution Network
(for Segmentation) backward error"; the per-pixel loss has to be reduced, e.g. averaged, before
`backward()`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
CLASSES = 3
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, CLASSES, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images = torch.randn(2, 3, 8, 8)
labels = torch.randint(0, CLASSES, (2, 8, 8))

logsoftmax = nn.LogSoftmax(dim=1)
criterion = nn.NLLLoss(reduction="none")
losses = []
for step in range(3):
    outputs = model(images)
    outputs = logsoftmax(outputs)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().mean())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
