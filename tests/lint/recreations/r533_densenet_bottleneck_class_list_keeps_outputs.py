"""A forum user experiments with a DenseNet that freezes its first layers
after some iterations: each `Bottleneck` saves its output for every training
batch in a class attribute, `Bottleneck.out_saved[self.counter] = out`, and
once the layer is frozen it replays `out_saved[...].detach()` instead of
computing.  "I am getting an out of memory error with CIFAR ... I did not
quite understand why saving intermediate output will make GPU out of
memory."  The saved outputs are graph tensors: each keeps the whole graph of
its batch (the activations of every layer below) alive for as long as the
class list holds it.  Nothing raises; memory grows with the number of saved
batches.
Buggy line: `Bottleneck.out_saved[self.counter] = out`.
Source: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    out_saved = [0] * 8

    def __init__(self, nChannels, growthRate, layer_index, train_size, batch_sz):
        super().__init__()
        interChannels = 4 * growthRate
        self.bn1 = nn.BatchNorm2d(nChannels)
        self.conv1 = nn.Conv2d(nChannels, interChannels, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(interChannels)
        self.conv2 = nn.Conv2d(interChannels, growthRate, kernel_size=3, padding=1, bias=False)
        self.active = True
        self.layer_index = layer_index
        self.counter = 0
        self.maxCounter = train_size // batch_sz + (1 if train_size % batch_sz else 0)

    def forward(self, x):
        if self.active:
            out = self.conv1(F.relu(self.bn1(x)))
            out = self.conv2(F.relu(self.bn2(out)))
            out = torch.cat((x, out), 1)
            if self.layer_index < DenseNet.freezeLayerIndex:
                Bottleneck.out_saved[self.counter] = out  # missed: ADL017
                self.counter += 1
                if self.counter >= self.maxCounter:
                    self.counter = 0
                    self.active = False
            return out
        detach = Bottleneck.out_saved[self.counter].detach()
        self.counter += 1
        if self.counter >= self.maxCounter:
            self.counter = 0
        return detach


class DenseNet(nn.Module):
    freezeLayerIndex = 1

    def __init__(self, growthRate=2, train_size=8, batch_sz=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, kernel_size=3, padding=1, bias=False)
        self.block = nn.Sequential(
            Bottleneck(4, growthRate, 0, train_size, batch_sz),
            Bottleneck(4 + growthRate, growthRate, 1, train_size, batch_sz),
        )
        self.fc = nn.Linear(4 + 2 * growthRate, 10)

    def forward(self, x):
        out = self.block(self.conv1(x))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.fc(out)


def train(epochs=1, train_size=8, batch_sz=4):
    torch.manual_seed(0)
    net = DenseNet(train_size=train_size, batch_sz=batch_sz)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    data = torch.randn(train_size, 3, 6, 6)
    target = torch.randint(0, 10, (train_size,))
    for epoch in range(epochs):
        for i in range(0, train_size, batch_sz):
            optimizer.zero_grad()
            loss = F.cross_entropy(net(data[i:i + batch_sz]), target[i:i + batch_sz])
            loss.backward()
            optimizer.step()
    return net


def bug_shows():
    """After the epoch the class list still holds graph tensors: each saved
    output has a grad_fn, so its batch's graph stays alive."""
    Bottleneck.out_saved = [0] * 8
    train()
    saved = [t for t in Bottleneck.out_saved if isinstance(t, torch.Tensor)]
    return len(saved) == 2 and all(t.grad_fn is not None for t in saved)
