"""VectorNet's `masked_softmax` helper masks the attention scores row by row,
writing into the rows it iterates over (`for count, row in enumerate(X):
row[...] = -1e6`); those rows are views returned together by one op, which
autograd forbids writing ("... is a view and is being modified inplace. This
view is the output of a function that returns multiple views").
Source: https://github.com/xk-huang/yet-another-vectornet/issues/34"""
import numpy as np
import torch
import torch.nn as nn


def masked_softmax(X, valid_len):
    """masked softmax for attention scores
    args:
        X: 3-D tensor, valid_len: 1-D or 2-D tensor
    """
    if valid_len is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_len.dim() == 1:
            valid_len = torch.repeat_interleave(valid_len, repeats=shape[1], dim=0)
        else:
            valid_len = valid_len.reshape(-1)
        # Fill masked elements with a large negative, whose exp is 0
        X = X.reshape(-1, shape[-1])
        for count, row in enumerate(X):
            row[int(valid_len[count]):] = -1e6  # missed: ADL015
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class SelfAttentionLayer(nn.Module):
    def __init__(self, in_channels, global_graph_width, need_scale=False):
        super(SelfAttentionLayer, self).__init__()
        self.in_channels = in_channels
        self.q_lin = nn.Linear(in_channels, global_graph_width)
        self.k_lin = nn.Linear(in_channels, global_graph_width)
        self.v_lin = nn.Linear(in_channels, global_graph_width)
        self.scale_factor_d = 1 + int(np.sqrt(self.in_channels)) if need_scale else 1

    def forward(self, x, valid_len):
        query = self.q_lin(x)
        key = self.k_lin(x)
        value = self.v_lin(x)
        scores = torch.bmm(query, key.transpose(1, 2))
        attention_weights = masked_softmax(scores, valid_len)
        return torch.bmm(attention_weights, value)


def run():
    layer = SelfAttentionLayer(4, 8)
    x = torch.randn(2, 3, 4)
    out = layer(x, torch.tensor([2, 3]))
    out.sum().backward()
