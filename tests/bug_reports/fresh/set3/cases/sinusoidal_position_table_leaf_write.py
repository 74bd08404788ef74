"""A transformer's fixed sinusoidal position table is written column by column into an
`nn.Embedding`'s weight, a leaf that requires grad: "a view of a leaf Variable that requires grad is
being used in an in-place operation".
Source: https://github.com/Atcold/NYU-DLSP20/issues/765 (fix: write the table under
`torch.no_grad()`; the positions are not learned).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def fill_sinusoids(table):
    positions = torch.arange(table.shape[0]).unsqueeze(1)
    rates = torch.exp(torch.arange(0, table.shape[1], 2) * (-math.log(10000.0) / table.shape[1]))
    table[:, 0::2] = torch.sin(positions * rates)
    table[:, 1::2] = torch.cos(positions * rates)


class Embeddings(nn.Module):
    def __init__(self, vocab, d_model, max_len):
        super().__init__()
        self.words = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        fill_sinusoids(self.positions.weight)
        self.positions.weight.requires_grad = False

    def forward(self, tokens):
        return self.words(tokens) + self.positions(torch.arange(tokens.shape[1]))


embed = Embeddings(vocab=20, d_model=8, max_len=10)
classifier = nn.Linear(8, 2)
tokens, labels = torch.randint(0, 20, (3, 6)), torch.tensor([0, 1, 1])
loss = nn.functional.cross_entropy(classifier(embed(tokens).mean(1)), labels)
loss.backward()
result = {"loss": loss.detach(), "grads": [embed.words.weight.grad, classifier.weight.grad, classifier.bias.grad]}
