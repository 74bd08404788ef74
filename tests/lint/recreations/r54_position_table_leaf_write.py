"""A transformer classifier builds its sinusoidal position table in a
`requires_grad=True` tensor and fills the even and odd columns by slice
assignment ("a view of a leaf Variable that requires grad is being used in
an in-place operation").
Source: https://github.com/Atcold/NYU-DLSP20/issues/765"""
import numpy as np
import torch
import torch.nn as nn


def create_sinusoidal_embeddings(nb_p, dim, E):
    theta = np.array([[p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(nb_p)])
    E[:, 0::2] = torch.FloatTensor(np.sin(theta[:, 0::2]))  # missed: ADL014
    E[:, 1::2] = torch.FloatTensor(np.cos(theta[:, 1::2]))
    E.detach_()
    E.requires_grad = False
    E = E.to("cpu")


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings, p):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(nb_p=max_position_embeddings, dim=d_model, E=self.position_embeddings.weight)
        self.LayerNorm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class TransformerClassifier(nn.Module):
    def __init__(self, d_model, input_vocab_size, num_answers, maximum_position_encoding=16):
        super().__init__()
        self.embedding = Embeddings(d_model, input_vocab_size, maximum_position_encoding, p=0.1)
        self.dense = nn.Linear(d_model, num_answers)

    def forward(self, x):
        x = self.embedding(x)
        x, _ = torch.max(x, dim=1)
        return self.dense(x)


def run():
    torch.manual_seed(0)
    model = TransformerClassifier(d_model=8, input_vocab_size=50, num_answers=2)
    return model(torch.randint(0, 50, (2, 6)))
