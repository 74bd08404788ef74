"""pytorch-memonger (sublinear-memory training): the ResNet's stages are wrapped so that each
segment runs through `torch.utils.checkpoint` (reentrant), starting from the input batch. The
reporter sees "UserWarning: None of the inputs have requires_grad=True. Gradients will be None":
the image does not require grad, so the first checkpointed segment's output does not either, the
next segments see the same, and none of the convolution / batch-norm parameters inside the
checkpointed stages receive a gradient; only the classifier after them trains. Nothing fails.
The thread got no answer; PyTorch's fix for this is the non-reentrant checkpoint
(`use_reentrant=False`), which gives every stage its gradient (an input that requires grad does
too).
Source: https://github.com/Lyken17/pytorch-memonger/issues/4
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class SublinearSequential(nn.Sequential):
    """Runs its children in segments, each recomputed in backward instead of stored."""

    def __init__(self, *modules, segments=2):
        super().__init__(*modules)
        self.segments = segments

    def forward(self, x):
        children = list(self.children())
        size = (len(children) + self.segments - 1) // self.segments

        def run(start, end):
            def segment(inp):
                for module in children[start:end]:
                    inp = module(inp)
                return inp
            return segment

        for start in range(0, len(children), size):
            x = checkpoint(run(start, start + size), x, use_reentrant=True)
        return x


class ResNet(nn.Module):
    def __init__(self, num_classes=4, width=8):
        super().__init__()
        self.features = SublinearSequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            BasicBlock(width), BasicBlock(width), BasicBlock(width), segments=2)
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        out = self.features(x)
        return self.fc(F.adaptive_avg_pool2d(out, 1).flatten(1))


model = ResNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
losses = []
for step in range(3):
    images = torch.randn(8, 3, 8, 8)
    labels = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
