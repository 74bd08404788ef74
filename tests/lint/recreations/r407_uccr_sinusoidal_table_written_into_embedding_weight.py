"""UCCR's transformer builds its positional embedding as an `nn.Embedding`
and fills the weight with a sinusoid table through a helper,
`create_position_codes(n_pos, dim, out=self.position_embeddings.weight)`,
which writes `out[:, 0::2] = ...` into its argument: a view of a leaf that
requires grad is written in place ("a view of a leaf Variable that requires
grad is being used in an in-place operation", PyTorch >= 1.6).  The fix
writes under `torch.no_grad()` (or turns `requires_grad` off first).
Buggy line: `out[:, 0::2] = ...` in `create_position_codes`.
Source: https://github.com/lisk123/UCCR/issues/6"""
import numpy as np
import torch
import torch.nn as nn


def create_position_codes(n_pos, dim, out):
    position_enc = np.array([[pos / np.power(10000, 2 * j / dim) for j in range(dim // 2)] for pos in range(n_pos)])
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc)).type_as(out)  # missed: ADL014
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc)).type_as(out)
    out.detach_()
    out.requires_grad = False


class TransformerEncoder(nn.Module):
    def __init__(self, vocab=12, dim=8, n_positions=16, learn_positional_embeddings=False):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.position_embeddings = nn.Embedding(n_positions, dim)
        if not learn_positional_embeddings:
            create_position_codes(n_positions, dim, out=self.position_embeddings.weight)
        self.layer = nn.Linear(dim, dim)

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1)).unsqueeze(0)
        return self.layer(self.embeddings(tokens) + self.position_embeddings(positions))


def run():
    TransformerEncoder()(torch.randint(0, 12, (2, 5)))
