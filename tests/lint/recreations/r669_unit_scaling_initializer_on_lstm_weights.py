"""allennlp issue 2239 ("Bug in initializer uniform_unit_scaling"): with PyTorch 0.4.1,
initialising an LSTM's or GRU's parameters with `allennlp.nn.initializers.uniform_unit_scaling`
raises "a leaf Variable that requires grad has been used in an in-place operation": the function
ends with `return tensor.uniform_(-max_value, max_value)` on the parameter itself, outside
`no_grad` (the proposed fix: `tensor.data.uniform_(...)`). Re-created with the initializer, an
`InitializerApplicator`-like helper that applies it by parameter-name regex, a small LSTM tagger
and its training loop.
Buggy line: `return tensor.uniform_(-max_value, max_value)` in `uniform_unit_scaling`.
Source: https://github.com/allenai/allennlp/issues/2239"""
import math
import re

import torch
import torch.nn as nn


def uniform_unit_scaling(tensor, nonlinearity="linear"):
    size = 1.0
    for dimension in list(tensor.size())[:-1]:
        size *= dimension
    activation_scaling = torch.nn.init.calculate_gain(nonlinearity, tensor)
    max_value = math.sqrt(3 / size) * activation_scaling
    return tensor.uniform_(-max_value, max_value)  # missed: ADL014 (an in-place write on a Parameter outside no_grad)


class InitializerApplicator:
    def __init__(self, initializers):
        self._initializers = initializers

    def __call__(self, module):
        for name, parameter in module.named_parameters():
            for regex, initializer in self._initializers:
                if re.search(regex, name):
                    initializer(parameter)
                    break


class LstmTagger(nn.Module):
    def __init__(self, vocab=20, dim=8, tags=4, initializer=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.LSTM(dim, dim, batch_first=True)
        self.tag_projection = nn.Linear(dim, tags)
        if initializer is not None:
            initializer(self)

    def forward(self, tokens):
        encoded, _ = self.encoder(self.embed(tokens))
        return self.tag_projection(encoded)


def train(steps=3):
    torch.manual_seed(0)
    initializer = InitializerApplicator([(r"encoder.*weight", uniform_unit_scaling)])
    model = LstmTagger(initializer=initializer)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        tokens, tags = torch.randint(0, 20, (2, 5)), torch.randint(0, 4, (2, 5))
        loss = nn.functional.cross_entropy(model(tokens).reshape(-1, 4), tags.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


run = train


if __name__ == "__main__":
    train()
