"""3DETR (facebookresearch/3detr), issue 55: a 90-epoch sanity-check training on torch 1.13
stopped at `loss.backward()` with "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.cuda.FloatTensor [256, 8, 256]], which is output
0 of ReluBackward0, is at version 1; expected version 0".  The transformer's encoder and decoder
layers (models/transformer.py) build every dropout as `nn.Dropout(dropout, inplace=True)` and the
activation from a name (`ACTIVATION_DICT[activation]()`, a ReLU by default); the feed-forward
branch runs `self.linear2(self.dropout(self.activation(self.linear1(src2))))`, so the in-place
dropout overwrites the ReLU's output, which the ReLU saved for its backward.  The reporter's fix
(confirmed by a later user): remove every `inplace=True` in the repository.
Re-created with the layer classes, their helper tables and `get_clones`, a small encoder over
random point features in place of the 3D detection pipeline.
Buggy line: the feed-forward branch of `TransformerEncoderLayer.forward_pre`.
Source: https://github.com/facebookresearch/3detr/issues/55"""
import copy
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


class BatchNormDim1Swap(nn.BatchNorm1d):
    def forward(self, x):
        hw, n, c = x.shape
        x = x.permute(1, 2, 0)
        x = super().forward(x)
        return x.permute(2, 0, 1)


NORM_DICT = {"bn": BatchNormDim1Swap, "ln": nn.LayerNorm}
ACTIVATION_DICT = {"relu": nn.ReLU, "gelu": nn.GELU}
WEIGHT_INIT_DICT = {"xavier_uniform": nn.init.xavier_uniform_}


def get_clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead=4, dim_feedforward=128, dropout=0.1,
                 activation="relu", normalize_before=True, norm_name="ln"):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout, inplace=True)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm2 = NORM_DICT[norm_name](d_model)
        self.dropout2 = nn.Dropout(dropout, inplace=True)
        self.norm1 = NORM_DICT[norm_name](d_model)
        self.dropout1 = nn.Dropout(dropout, inplace=True)
        self.activation = ACTIVATION_DICT[activation]()
        self.normalize_before = normalize_before
        self.nhead = nhead

    def with_pos_embed(self, tensor, pos: Optional[Tensor]):
        return tensor if pos is None else tensor + pos

    def forward_pre(self, src, src_mask=None, pos=None):
        src2 = self.norm1(src)
        q = k = self.with_pos_embed(src2, pos)
        src2 = self.self_attn(q, k, value=src2, attn_mask=src_mask)[0]
        src = src + self.dropout1(src2)
        src2 = self.norm2(src)
        src2 = self.linear2(self.dropout(self.activation(self.linear1(src2))))  # expect: ADL001
        src = src + self.dropout2(src2)
        return src

    def forward(self, src, src_mask=None, pos=None):
        return self.forward_pre(src, src_mask, pos)


class TransformerEncoder(nn.Module):
    def __init__(self, encoder_layer, num_layers, norm=None, weight_init_name="xavier_uniform"):
        super().__init__()
        self.layers = get_clones(encoder_layer, num_layers)
        self.norm = norm
        func = WEIGHT_INIT_DICT[weight_init_name]
        for p in self.parameters():
            if p.dim() > 1:
                func(p)

    def forward(self, src, pos=None):
        output = src
        for layer in self.layers:
            output = layer(output, pos=pos)
        if self.norm is not None:
            output = self.norm(output)
        return output


class PointHead(nn.Module):
    def __init__(self, d_model=32, n_cls=5):
        super().__init__()
        self.pre = nn.Linear(3, d_model)
        layer = TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=64, dropout=0.1)
        self.encoder = TransformerEncoder(layer, num_layers=2)
        self.cls = nn.Linear(d_model, n_cls)

    def forward(self, xyz):
        feats = self.pre(xyz).permute(1, 0, 2)  # npoints x batch x channel
        feats = self.encoder(feats)
        return self.cls(feats.mean(dim=0))


def train_one_epoch(model, optimizer, criterion, loader):
    model.train()
    total = 0.0
    for xyz, label in loader:
        optimizer.zero_grad()
        loss = criterion(model(xyz), label)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def run():
    torch.manual_seed(0)
    model = PointHead()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    criterion = nn.CrossEntropyLoss()
    loader = [(torch.randn(4, 16, 3), torch.randint(0, 5, (4,))) for _ in range(2)]
    return train_one_epoch(model, optimizer, criterion, loader)


if __name__ == "__main__":
    run()
