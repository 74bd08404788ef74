"""Unsupervised image segmentation by backpropagation (Kanezaki): a small CNN predicts a cluster per
pixel, the argmax labels are refined by a superpixel majority vote and used as the target of a
cross-entropy loss, and SGD trains the network on its own refined labels. The middle convolution and
batch-norm layers are created in plain Python lists (`self.conv2 = []; self.conv2.append(...)`), so
`nn.Module` never registers them: `model.parameters()` leaves them out, the optimizer never updates
them, and they keep their random initial weights while they still take part in every forward pass
(their `.grad` fills up, but nothing reads it). Nothing raises.
Source: https://github.com/kanezaki/pytorch-unsupervised-segmentation/pull/6 ("the conv and batch
normalization layers were being added to a normal list on our module instance ... This PR puts those
layers in a `nn.ModuleList`"; maintainer: "Thanks a lot for fixing the param collection!").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN_CH, CHANNELS, N_CONV, SIZE, N_SEGMENTS = 3, 8, 3, 12, 9


class SegmentationNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(IN_CH, CHANNELS, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(CHANNELS)
        self.conv2 = []
        self.bn2 = []
        for _ in range(N_CONV - 1):
            self.conv2.append(nn.Conv2d(CHANNELS, CHANNELS, kernel_size=3, padding=1))
            self.bn2.append(nn.BatchNorm2d(CHANNELS))
        self.conv3 = nn.Conv2d(CHANNELS, CHANNELS, kernel_size=1)
        self.bn3 = nn.BatchNorm2d(CHANNELS)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        for conv, bn in zip(self.conv2, self.bn2):
            x = F.relu(bn(conv(x)))
        return self.bn3(self.conv3(x))


image = torch.rand(1, IN_CH, SIZE, SIZE)
# Stand-in for SLIC superpixels: a fixed 3x3 grid of regions.
segments = (torch.arange(SIZE).view(-1, 1) // 4) * 3 + (torch.arange(SIZE).view(1, -1) // 4)
segments = segments.flatten()

model = SegmentationNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
losses = []
for it in range(4):
    optimizer.zero_grad()
    output = model(image)[0].permute(1, 2, 0).reshape(-1, CHANNELS)
    labels = output.argmax(dim=1)
    target = labels.clone()
    for s in range(N_SEGMENTS):
        in_segment = segments == s
        target[in_segment] = torch.mode(labels[in_segment]).values
    loss = F.cross_entropy(output, target)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

layers = [model.conv1, model.bn1, *model.conv2, *model.bn2, model.conv3, model.bn3]
result = {"losses": losses, "params": [p.detach().clone() for layer in layers for p in layer.parameters()]}
