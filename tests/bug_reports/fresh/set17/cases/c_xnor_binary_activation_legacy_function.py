"""An XNOR-Net style binary LeNet: the activations in front of each binary layer are binarised by
a custom `torch.autograd.Function` written in the old style, with instance methods
`forward(self, input)` / `backward(self, grad_output)`, the input kept with
`self.save_for_backward`, and the Function called as `BinActive()(x)`. The backward is a clipped
straight-through estimator (gradient passed where |x| < 1). Since PyTorch 1.5 such legacy
Functions raise on their first call: "Legacy autograd function with non-static forward method
is deprecated. Please use new-style autograd function with static forward method."
Source: https://github.com/jiecaoyu/XNOR-Net-PyTorch/pull/118 ("Legacy autograd function error":
the MNIST example fails with that message on PyTorch 1.8; the fix makes `forward` and `backward`
static methods taking `ctx` and calls `BinActive.apply(x)`; issue #125 of the same repository
reports the follow-on error of a half-converted Function).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinActive(torch.autograd.Function):
    def forward(self, input):
        self.save_for_backward(input)
        return input.sign()

    def backward(self, grad_output):
        input, = self.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.abs() >= 1] = 0
        return grad_input


class BinaryLeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 5)
        self.bn2 = nn.BatchNorm2d(8, affine=False)
        self.conv2 = nn.Conv2d(8, 16, 5)
        self.bn3 = nn.BatchNorm1d(16 * 4 * 4, affine=False)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = BinActive()(self.bn2(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        x = BinActive()(self.bn3(x))
        return self.fc(x)


model = BinaryLeNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
losses = []
for step in range(3):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
