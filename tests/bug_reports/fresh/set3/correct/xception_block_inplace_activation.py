"""An Xception-style block computes its shortcut from `x`, then applies `nn.ReLU(inplace=True)` to
the same `x`: the shortcut convolution saved `x` for backward and the ReLU overwrote it.
Source: https://github.com/osmr/imgclsmob/issues/13 (fix: remove `inplace=True`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class XceptionBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.identity_conv = nn.Conv2d(in_channels, out_channels, 1, stride=2)
        self.activ = nn.ReLU(inplace=False)
        self.sep_conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        identity = self.identity_conv(x)
        x = self.activ(x)
        x = self.pool(self.sep_conv(x))
        return x + identity


stem = nn.Conv2d(3, 6, 3, padding=1)
block = XceptionBlock(6, 8)
head = nn.Linear(8, 3)
images, labels = torch.randn(2, 3, 8, 8), torch.tensor([0, 2])
logits = head(block(stem(images)).mean(dim=(2, 3)))
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for m in (stem, block, head) for p in m.parameters()]}
