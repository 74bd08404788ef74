"""Skeleton-based action recognition with ST-TR's graph convolutional backbone (ST-GCN units): each
TCN_GCN_unit runs a spatial graph convolution (one 1x1 convolution per adjacency partition, batch
norm, ReLU) and then a temporal unit, Unit2D, whose forward starts with
`nn.Dropout(dropout, inplace=True)` on its input. That input is the graph convolution's ReLU output,
which ReLU keeps for its backward; the in-place dropout overwrites it, and `loss.backward()` fails
with "one of the variables needed for gradient computation has been modified by an inplace
operation: [torch.cuda.FloatTensor [16, 512, 75, 25]], which is output 0 of ReluBackward0, is at
version 1; expected version 0 instead". The reporters got past it only by going back to an older
PyTorch; the change that keeps the model as written: a dropout that is not in place in Unit2D.
Source: https://github.com/Chiaraplizz/ST-TR/issues/36
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv_init(module):
    n = module.out_channels
    for k in module.kernel_size:
        n = n * k
    module.weight.data.normal_(0, math.sqrt(2. / n))


class Unit2D(nn.Module):
    def __init__(self, D_in, D_out, kernel_size, stride=1, dropout=0):
        super().__init__()
        pad = int((kernel_size - 1) / 2)
        self.conv = nn.Conv2d(D_in, D_out, kernel_size=(kernel_size, 1), padding=(pad, 0), stride=(stride, 1))
        self.bn = nn.BatchNorm2d(D_out)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout, inplace=True)
        conv_init(self.conv)

    def forward(self, x):
        x = self.dropout(x)
        x = self.relu(self.bn(self.conv(x)))
        return x


class unit_gcn(nn.Module):
    def __init__(self, in_channels, out_channels, A):
        super().__init__()
        self.V = A.size()[-1]
        self.A = A.clone().view(-1, self.V, self.V)
        self.out_channels = out_channels
        self.conv_list = nn.ModuleList([nn.Conv2d(in_channels, out_channels, kernel_size=(1, 1))
                                        for i in range(self.A.size()[0])])
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        for conv in self.conv_list:
            conv_init(conv)

    def forward(self, x):
        N, C, T, V = x.size()
        for i, a in enumerate(self.A):
            xa = x.reshape(-1, V).mm(a).reshape(N, C, T, V)
            y = self.conv_list[i](xa) if i == 0 else y + self.conv_list[i](xa)
        y = self.bn(y)
        y = self.relu(y)
        return y


class TCN_GCN_unit(nn.Module):
    def __init__(self, in_channel, out_channel, A, kernel_size=9, stride=1, dropout=0.5):
        super().__init__()
        self.gcn1 = unit_gcn(in_channel, out_channel, A)
        self.tcn1 = Unit2D(out_channel, out_channel, kernel_size=kernel_size, dropout=dropout, stride=stride)
        if in_channel != out_channel or stride != 1:
            self.down1 = Unit2D(in_channel, out_channel, kernel_size=1, stride=stride)
        else:
            self.down1 = None

    def forward(self, x):
        x = self.tcn1(self.gcn1(x)) + (x if self.down1 is None else self.down1(x))
        return x


class Model(nn.Module):
    def __init__(self, num_class, num_point, A, channels=(16, 16, 32)):
        super().__init__()
        self.data_bn = nn.BatchNorm1d(3 * num_point)
        units, in_channel = [], 3
        for i, out_channel in enumerate(channels):
            units.append(TCN_GCN_unit(in_channel, out_channel, A, stride=2 if i == 2 else 1))
            in_channel = out_channel
        self.backbone = nn.ModuleList(units)
        self.fcn = nn.Conv1d(in_channel, num_class, kernel_size=1)

    def forward(self, x):
        N, C, T, V = x.size()
        x = self.data_bn(x.permute(0, 3, 1, 2).reshape(N, V * C, T)).reshape(N, V, C, T).permute(0, 2, 3, 1)
        for unit in self.backbone:
            x = unit(x)
        x = F.avg_pool2d(x, kernel_size=(1, V)).squeeze(-1)
        x = F.avg_pool1d(x, kernel_size=x.size(2))
        return self.fcn(x).view(N, -1)


V = 25
A = torch.stack([torch.eye(V), torch.roll(torch.eye(V), 1, 0) / 2, torch.roll(torch.eye(V), -1, 0) / 2])
model = Model(num_class=6, num_point=V, A=A)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
losses = []
for step in range(3):
    skeletons, labels = torch.randn(4, 3, 20, V), torch.randint(0, 6, (4,))
    output = model(skeletons)
    loss = F.cross_entropy(output, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses), "weights": [p.detach().clone() for p in model.parameters()]}
