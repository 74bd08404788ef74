"""robosat's `rs train` tool validates the segmentation model after each
epoch in `validate(loader, num_classes, device, net, criterion)`: it puts the
net in `eval()` mode and runs `outputs = net(images)` over the validation
loader with gradients on, so each batch builds a graph; the pull request
wraps validation in `torch.no_grad()` "to prevent possible 'out of memory'
errors during validation".  Nothing raises; the outputs carry graphs.
Buggy line: `outputs = net(images)` in `validate`, no `torch.no_grad()`.
Source: https://github.com/mapbox/robosat/pull/109"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.enc = nn.Conv2d(3, 4, 3, padding=1)
        self.dec = nn.Conv2d(4, num_classes, 1)

    def forward(self, x):
        return self.dec(F.relu(self.enc(x)))


class Metrics:
    def __init__(self, labels):
        self.labels = labels
        self.tn = self.fn = self.fp = self.tp = 0

    def add(self, actual, predicted):
        masks = torch.argmax(predicted, 0)
        self.tp += int(((masks == 1) & (actual == 1)).sum())
        self.fp += int(((masks == 1) & (actual == 0)).sum())


def train(loader, num_classes, device, net, optimizer, criterion):
    net.train()
    running_loss = 0.0
    for images, masks, tiles in loader:
        images, masks = images.to(device), masks.to(device)
        optimizer.zero_grad()
        outputs = net(images)
        loss = criterion(outputs, masks)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    return {"loss": running_loss / len(loader)}


def validate(loader, num_classes, device, net, criterion, record=None):
    num_samples = 0
    running_loss = 0
    metrics = Metrics(range(num_classes))
    net.eval()
    for images, masks, tiles in loader:
        images = images.to(device)
        masks = masks.to(device)
        num_samples += int(images.size(0))
        outputs = net(images)  # expect: ADL031
        if record is not None:
            record.append(outputs.requires_grad)
        loss = criterion(outputs, masks)
        running_loss += loss.item()
        for mask, output in zip(masks, outputs):
            metrics.add(mask, output)
    return {"loss": running_loss / num_samples}


def bug_shows():
    """Validation outputs carry a graph: gradients were on."""
    torch.manual_seed(0)
    loader = [(torch.randn(2, 3, 4, 4), torch.randint(0, 2, (2, 4, 4)), None) for _ in range(2)]
    net = UNet()
    criterion = nn.CrossEntropyLoss()
    train(loader, 2, "cpu", net, torch.optim.SGD(net.parameters(), lr=0.1), criterion)
    record = []
    validate(loader, 2, "cpu", net, criterion, record=record)
    return all(record)
