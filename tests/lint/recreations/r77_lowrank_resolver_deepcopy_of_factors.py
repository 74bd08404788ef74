"""A singular-value fine-tuning resolver replaces each convolution by a
low-rank module whose factors are computed from the trained weight with
`torch.svd` (so they carry a graph) and kept as plain attributes; the
resolver then deep-copies the model to build its CPU copy: "Only Tensors
created explicitly by the user (graph leaves) support the deepcopy protocol".
Source: https://github.com/syp2ysy/SVF/issues/7"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class LowRankConv(nn.Module):
    def __init__(self, conv, rank_ratio=1.0):
        super().__init__()
        weight = conv.weight
        out_channels, in_channels, kh, kw = weight.shape
        u, s, v = torch.svd(weight.reshape(out_channels, -1))
        rank = max(1, int(rank_ratio * s.shape[0]))
        self.u = u[:, :rank]
        self.v = v[:, :rank]
        self.vector_s = nn.Parameter(s[:rank].detach().clone())
        self.bias = conv.bias
        self.shape = (out_channels, in_channels, kh, kw)
        self.padding = conv.padding

    def forward(self, x):
        weight = (self.u * self.vector_s) @ self.v.t()
        return F.conv2d(x, weight.reshape(self.shape), self.bias, padding=self.padding)


class LowRankResolver:
    def __init__(self, model, global_low_rank_ratio=1.0):
        self.model_cpu = model
        self.global_low_rank_ratio = global_low_rank_ratio

    def reconstruct_lowrank_network(self):
        for name, module in list(self.model_cpu.named_children()):
            if isinstance(module, nn.Conv2d):
                setattr(self.model_cpu, name, LowRankConv(module, self.global_low_rank_ratio))
        self.low_rank_model_cpu = copy.deepcopy(self.model_cpu)  # missed: ADL006
        return self.low_rank_model_cpu


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x)))


def resolver(model, global_low_rank_ratio=1.0):
    return LowRankResolver(model, global_low_rank_ratio).reconstruct_lowrank_network()


def run():
    torch.manual_seed(0)
    model = resolver(Backbone(), global_low_rank_ratio=1.0)
    model(torch.randn(1, 3, 8, 8)).sum().backward()
