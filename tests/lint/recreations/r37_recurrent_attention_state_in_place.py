"""Recurrent linear attention updates the running state it is handed in place
(`Zi += K`, `Si += ...`); the previous step's einsums kept that state for
their backward, so backpropagating through two or more steps fails.
Source: https://github.com/idiap/fast-transformers/pull/10"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def elu_feature_map(x):
    return F.elu(x) + 1


class RecurrentLinearAttention(nn.Module):
    def __init__(self, query_dimensions, feature_map=None, eps=1e-6):
        super().__init__()
        self.feature_map = feature_map or elu_feature_map
        self.eps = eps

    def forward(self, query, key, value, state=None):
        Q = self.feature_map(query)
        K = self.feature_map(key)
        N, H, D = Q.shape
        _, _, M = value.shape
        if state is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = state
        Zi += K  # missed: ADL001
        Si += torch.einsum("nhd,nhm->nhdm", K, value)  # missed: ADL001
        Z = 1.0 / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)
        return V, [Si, Zi]


class RecurrentAttentionLayer(nn.Module):
    def __init__(self, attention, d_model, n_heads):
        super().__init__()
        d_keys = d_model // n_heads
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_keys * n_heads)
        self.out_projection = nn.Linear(d_keys * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, query, key, value, state=None):
        N, _ = query.shape
        H = self.n_heads
        query = self.query_projection(query).view(N, H, -1)
        key = self.key_projection(key).view(N, H, -1)
        value = self.value_projection(value).view(N, H, -1)
        new_value, state = self.inner_attention(query, key, value, state)
        return self.out_projection(new_value.reshape(N, -1)), state


def run():
    torch.manual_seed(0)
    layer = RecurrentAttentionLayer(RecurrentLinearAttention(4), d_model=8, n_heads=2)
    xs = torch.randn(3, 2, 8)
    state = None
    outputs = []
    for x in xs:
        out, state = layer(x, x, x, state=state)
        outputs.append(out)
    torch.stack(outputs).sum().backward()
