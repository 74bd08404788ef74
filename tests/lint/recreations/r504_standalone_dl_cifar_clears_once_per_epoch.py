"""Standalone-DeepLearning's Lab 7 (CIFAR-10 with a CNN) clears the
gradients once per epoch: `optimizer.zero_grad()` sits at the top of
`train(net, partition, optimizer, criterion, args)`, before the loop over
batches that calls `loss.backward()` and `optimizer.step()` each batch.
The student: "zero_grad() is used once per epoch, shouldn't it come before
every loss.backward()?"; the author fixed the same mistake in several labs.
Nothing raises.
Buggy line: `optimizer.zero_grad()` before the loop over batches in `train`.
Source: https://github.com/heartcored98/Standalone-DeepLearning/issues/11"""
import torch
import torch.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.conv(x).flatten(1))


def train(net, partition, optimizer, criterion, args, record=None):
    trainloader = partition["train"]
    net.train()
    correct, total, train_loss = 0, 0, 0.0
    optimizer.zero_grad()
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        if record is not None and net.fc.weight.grad is not None:
            record.append(net.fc.weight.grad.clone())
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()  # expect: ADL018
        train_loss += loss.item()
        total += labels.size(0)
        correct += (outputs.argmax(1) == labels).sum().item()
    return net, train_loss / len(trainloader), 100 * correct / total


def experiment(partition, args, record=None):
    torch.manual_seed(0)
    net = CNN()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=args["lr"], momentum=0.9)
    for epoch in range(args["epoch"]):
        net, train_loss, train_acc = train(net, partition, optimizer, criterion, args, record)
    return net


def bug_shows():
    """The second batch's backward adds onto the first batch's gradient."""
    torch.manual_seed(0)
    batches = [(torch.randn(2, 3, 8, 8), torch.randint(0, 10, (2,))) for _ in range(2)]
    record = []
    experiment({"train": batches}, {"lr": 0.01, "epoch": 1}, record)
    return len(record) == 1 and record[0].abs().sum().item() > 0
