"""invertible-resnet's `test(...)` in `models/utils_cifar.py` computes the
classifier's loss and accuracy on the test set after `model.eval()`, but
"computes loss on test set without turning gradient computations off ...
One might think model.eval() turns off gradients, but it does not"; this
ran out of GPU memory when several classifiers were trained at once (the
author: "will add a fix shortly").  Nothing raises on a large card.
Buggy line: `out, out_bij = model(inputs)` in `test`.
Source: https://github.com/jhjacobsen/invertible-resnet/issues/15"""
import torch
import torch.nn as nn


class iResNetBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.bottleneck = nn.Sequential(nn.Linear(d, d), nn.ELU(), nn.Linear(d, d))

    def forward(self, x):
        return x + 0.9 * self.bottleneck(x)


class iResNetClassifier(nn.Module):
    def __init__(self, d=6, nClasses=3):
        super().__init__()
        self.stack = nn.ModuleList([iResNetBlock(d) for _ in range(2)])
        self.logits = nn.Linear(d, nClasses)

    def forward(self, x):
        for block in self.stack:
            x = block(x)
        return self.logits(x), x


def train(args, model, optimizer, epoch, trainloader, use_cuda=False):
    model.train()
    criterion = nn.CrossEntropyLoss()
    for inputs, targets in trainloader:
        optimizer.zero_grad()
        out, out_bij = model(inputs)
        loss = criterion(out, targets)
        loss.backward()
        optimizer.step()


def test(best_result, args, model, epoch, testloader, use_cuda=False, test_log=None):
    model.eval()
    criterion = nn.CrossEntropyLoss()
    test_loss, correct, total = 0.0, 0, 0
    for batch_idx, (inputs, targets) in enumerate(testloader):
        out, out_bij = model(inputs)  # expect: ADL031
        loss = criterion(out, targets)
        test_loss += loss.item()
        correct += (out.argmax(1) == targets).sum().item()
        total += targets.size(0)
        if test_log is not None:
            test_log.append(out_bij)
    acc = 100.0 * correct / total
    return max(best_result, acc)


def bug_shows():
    """The test batches' outputs carry the classifier's graph."""
    torch.manual_seed(0)
    model = iResNetClassifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)]
    train({}, model, optimizer, 0, data)
    log = []
    test(0.0, {}, model, 0, data, test_log=log)
    return all(t.grad_fn is not None for t in log)
