"""MultiResUNet's residual path adds the shortcut in place (`x += shortcut`)
right after `F.relu(x)`, whose backward needs its output; "several `+=`
operations" break backward().  The MultiRes block's `+=` after a batch norm
is harmless (batch norm keeps its input, not its output).
Source: https://github.com/j-sripad/mulitresunet-pytorch/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d_batchnorm(nn.Module):
    def __init__(self, num_in_filters, num_out_filters, kernel_size, stride=(1, 1), activation="relu"):
        super().__init__()
        self.activation = activation
        self.conv1 = nn.Conv2d(num_in_filters, num_out_filters, kernel_size=kernel_size, stride=stride, padding="same")
        self.batchnorm = nn.BatchNorm2d(num_out_filters)

    def forward(self, x):
        x = self.conv1(x)
        x = self.batchnorm(x)
        if self.activation == "relu":
            return F.relu(x)
        else:
            return x


class Multiresblock(nn.Module):
    def __init__(self, num_in_channels, num_filters):
        super().__init__()
        filt_cnt_3x3 = num_filters // 4
        filt_cnt_5x5 = num_filters // 4
        filt_cnt_7x7 = num_filters // 2
        num_out_filters = filt_cnt_3x3 + filt_cnt_5x5 + filt_cnt_7x7
        self.shortcut = Conv2d_batchnorm(num_in_channels, num_out_filters, kernel_size=(1, 1), activation="None")
        self.conv_3x3 = Conv2d_batchnorm(num_in_channels, filt_cnt_3x3, kernel_size=(3, 3))
        self.conv_5x5 = Conv2d_batchnorm(filt_cnt_3x3, filt_cnt_5x5, kernel_size=(3, 3))
        self.conv_7x7 = Conv2d_batchnorm(filt_cnt_5x5, filt_cnt_7x7, kernel_size=(3, 3))
        self.batch_norm1 = nn.BatchNorm2d(num_out_filters)
        self.batch_norm2 = nn.BatchNorm2d(num_out_filters)

    def forward(self, x):
        shrtct = self.shortcut(x)
        a = self.conv_3x3(x)
        b = self.conv_5x5(a)
        c = self.conv_7x7(b)
        x = torch.cat([a, b, c], axis=1)
        x = self.batch_norm1(x)
        x += shrtct
        x = self.batch_norm2(x)
        x = F.relu(x)
        return x


class Respath(nn.Module):
    def __init__(self, num_in_filters, num_out_filters, respath_length):
        super().__init__()
        self.respath_length = respath_length
        self.shortcuts = nn.ModuleList([])
        self.convs = nn.ModuleList([])
        self.bns = nn.ModuleList([])
        for i in range(self.respath_length):
            if i == 0:
                self.shortcuts.append(Conv2d_batchnorm(num_in_filters, num_out_filters, kernel_size=(1, 1), activation="None"))
                self.convs.append(Conv2d_batchnorm(num_in_filters, num_out_filters, kernel_size=(3, 3), activation="relu"))
            else:
                self.shortcuts.append(Conv2d_batchnorm(num_out_filters, num_out_filters, kernel_size=(1, 1), activation="None"))
                self.convs.append(Conv2d_batchnorm(num_out_filters, num_out_filters, kernel_size=(3, 3), activation="relu"))
            self.bns.append(nn.BatchNorm2d(num_out_filters))

    def forward(self, x):
        for i in range(self.respath_length):
            shortcut = self.shortcuts[i](x)
            x = self.convs[i](x)
            x = self.bns[i](x)
            x = F.relu(x)
            x += shortcut  # expect: ADL001
            x = self.bns[i](x)
            x = F.relu(x)
        return x


class MultiResUnetHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.multiresblock1 = Multiresblock(3, 8)
        self.respath1 = Respath(8, 4, respath_length=2)

    def forward(self, x):
        x_multires1 = self.multiresblock1(x)
        return self.respath1(x_multires1)


def run():
    model = MultiResUnetHead()
    out = model(torch.randn(2, 3, 8, 8))
    out.mean().backward()
