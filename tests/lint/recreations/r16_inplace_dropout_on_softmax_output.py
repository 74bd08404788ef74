"""An in-place attention dropout on the softmax output, which SoftmaxBackward0
keeps (found in timm's TNT while measuring precision, attn_drop > 0).
Source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/tnt.py#L64-L65"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, attn_drop=0.1):
        super().__init__()
        self.qk = nn.Linear(dim, dim * 2)
        self.attn_drop = nn.Dropout(attn_drop, inplace=True)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        attn = (q @ k.transpose(-2, -1)) * 0.5
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)  # expect: ADL001
        return attn @ x


def run():
    Attention(4)(torch.randn(2, 3, 4)).sum().backward()
