"""pytorch-LBCNN (local binary convolution), issue 1 ("Fatal problem in your code"): `LBCNN.__init__`
sets `self.LBCNN.weight.requires_grad=False` to keep the sparse binary anchor weights fixed, and
only afterwards assigns `self.LBCNN.weight = Parameter(...)` with the generated anchors -- a new
parameter, trainable by default.  The flag set earlier belonged to the replaced tensor, so the
anchor weights are trained like an ordinary convolution: "the LBCNN is just a normal 2DConv".
Re-created in my own words with the repository's structure: the `LBCNN` module (a bias-free
`Conv2d`, the flag, the anchors drawn with a random permutation and a Bernoulli draw, the
re-wrapped weight), a block with a learnable 1x1 combination, and a training loop with SGD over
`model.parameters()`.
Nothing raises: `bug_shows()` shows the anchor weights changed by one optimizer step.
Buggy line: `self.LBCNN.weight = Parameter(anchors)` after the flag.
Source: https://github.com/eeric/pytorch-LBCNN/issues/1"""
import torch
import torch.nn as nn
from torch.nn import Conv2d, Module, Parameter


class LBCNN(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, sparsity=0.5):
        super(LBCNN, self).__init__()
        self.nInputPlane = in_channels
        self.nOutputPlane = out_channels
        self.kW = kernel_size
        self.LBCNN = Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
        self.LBCNN.weight.requires_grad = False
        num_elements = self.nInputPlane * self.nOutputPlane * self.kW * self.kW
        index = torch.randperm(num_elements)
        uniform = torch.Tensor(self.nOutputPlane, self.nInputPlane, self.kW, self.kW).uniform_(0, 1)
        anchors = (torch.bernoulli(uniform) * 2 - 1).view(-1)
        anchors[index[:int(num_elements * sparsity)]] = 0
        anchors = anchors.view(self.nOutputPlane, self.nInputPlane, self.kW, self.kW)
        self.LBCNN.weight = Parameter(anchors)  # missed: no rule, `requires_grad = False` set on a parameter that is then replaced by a new `Parameter(...)`, trainable by default

    def forward(self, input):
        return self.LBCNN.forward(input)


class BlockLBP(nn.Module):
    def __init__(self, num_channels, num_weights):
        super().__init__()
        self.batch_norm = nn.BatchNorm2d(num_channels)
        self.conv_lbp = LBCNN(num_channels, num_weights, kernel_size=3, padding=1)
        self.conv_1x1 = nn.Conv2d(num_weights, num_channels, kernel_size=1)

    def forward(self, x):
        residual = x
        x = self.batch_norm(x)
        x = torch.relu(self.conv_lbp(x))
        x = self.conv_1x1(x)
        return x + residual


class Lbcnn(nn.Module):
    def __init__(self, in_channels=3, num_channels=4, num_weights=8, num_classes=2):
        super().__init__()
        self.preprocess = nn.Conv2d(in_channels, num_channels, 3, padding=1)
        self.block = BlockLBP(num_channels, num_weights)
        self.fc = nn.Linear(num_channels, num_classes)

    def forward(self, x):
        x = self.block(self.preprocess(x))
        return self.fc(x.mean(dim=(2, 3)))


def train(model, loader, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
    return model


def run():
    torch.manual_seed(0)
    model = Lbcnn()
    anchors_before = model.block.conv_lbp.LBCNN.weight.detach().clone()
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4,))) for _ in range(2)]
    train(model, loader)
    return anchors_before, model.block.conv_lbp.LBCNN.weight.detach()


def bug_shows():
    before, after = run()
    return not torch.equal(before, after)
