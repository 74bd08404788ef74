"""Gradient Embedding Perturbation (GEP, differentially private training,
ICLR 2021): per-sample gradients come from BackPACK, whose `extend(net)`
puts module hooks on every layer of the CIFAR ResNet-20 (`with
backpack(BatchGrad()): loss.backward()`).  The ResNet's blocks use
`nn.ReLU(inplace=True)` and add the shortcut in place, `out += identity`.
On torch 1.12 the private training fails at the forward (the reporter: "it
seems that it's about the ReLU function"): a module whose backward is hooked
returns its output through a hook function, and writing that output in place
is refused ("Output 0 of BackwardHookFunctionBackward is a view and is being
modified inplace ...").  The maintainer: "It is caused by the inplace
operations. I have updated the code" (commit "Replace inplace ops":
`nn.ReLU(inplace=False)` and `out = out + identity`).  Re-created as the
repository's `BasicBlock` / `ResNet` (GroupNorm without affine, the
zero-padded shortcut) and an `extend` that hooks each layer's backward as
the per-sample-gradient extension does, with the private training step.
Raises at the first forward.
Buggy lines: `self.relu = nn.ReLU(inplace=True)` and `out += identity` in
`BasicBlock`.
Source: https://github.com/dayu11/Gradient-Embedding-Perturbation/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F

gn_groups = 4


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(BasicBlock, self).__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.gn1 = nn.GroupNorm(gn_groups, planes, affine=False)
        self.relu = nn.ReLU(inplace=True)  # expect: ADL025
        self.conv2 = conv3x3(planes, planes)
        self.gn2 = nn.GroupNorm(gn_groups, planes, affine=False)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.gn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.gn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
            identity = torch.cat((identity, torch.zeros_like(identity)), 1)
        out += identity  # expect: ADL025
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10):
        super(ResNet, self).__init__()
        self.inplanes = 16
        self.conv1 = conv3x3(3, 16)
        self.gn1 = nn.GroupNorm(gn_groups, 16, affine=False)
        self.relu = nn.ReLU(inplace=True)  # expect: ADL025
        self.layer1 = self._make_layer(block, 16, layers[0])
        self.layer2 = self._make_layer(block, 32, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.AvgPool2d(1, stride=stride)
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [block(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.gn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def extend(net):
    """Hook every layer's backward to collect what per-sample gradients need."""
    store = {}

    def save_grad_output(module, grad_input, grad_output):
        store[module] = grad_output[0].detach()

    for module in net.modules():
        if len(list(module.children())) == 0:
            module.register_full_backward_hook(save_grad_output)
    return store


def run():
    torch.manual_seed(0)
    net = ResNet(BasicBlock, [1, 1])
    store = extend(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    inputs, targets = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = F.cross_entropy(outputs, targets)
    loss.backward()
    optimizer.step()
