"""Keyword spotting with a quantization-aware GRU: the learned initial hidden state goes through a
fake-quantizer, is split per layer with `unbind`, and each layer's state is squeezed in place
(`hx[idx].squeeze_(0)`); outputs of `unbind` may not be modified in place.
Source: https://github.com/alibaba/TinyNeuralNetwork/issues/238 ("Output 0 of UnbindBackward0 is a
view and is being modified inplace in GRU", at `hx = [(hx[idx].squeeze_(0)) for idx in
range(self.num_layers)]`).
expect: raises"""
import torch
import torch.nn as nn


class FakeQuant(nn.Module):
    def forward(self, x):
        scale = 0.05
        return x + ((x / scale).round() * scale - x).detach()


class QuantGRU(nn.Module):
    def __init__(self, input_size, hidden, num_layers=2):
        super().__init__()
        self.num_layers = num_layers
        self.cells = nn.ModuleList(nn.GRUCell(input_size if i == 0 else hidden, hidden) for i in range(num_layers))
        self.h0 = nn.Parameter(torch.zeros(num_layers, 1, hidden))
        self.quant = FakeQuant()

    def forward(self, frames):
        hx = self.quant(self.h0).unbind(0)
        hx = [(hx[idx].squeeze(0)) for idx in range(self.num_layers)]
        for frame in frames:
            x = frame
            for idx, cell in enumerate(self.cells):
                hx[idx] = cell(x, hx[idx])
                x = hx[idx]
        return x


torch.manual_seed(0)
gru = QuantGRU(6, 8)
classifier = nn.Linear(8, 3)
optimizer = torch.optim.SGD([*gru.parameters(), *classifier.parameters()], lr=0.1)
utterances = [(torch.randn(5, 6), torch.tensor(i % 3)) for i in range(3)]
losses = []
for frames, label in utterances:
    loss = nn.functional.cross_entropy(classifier(gru(frames))[None], label[None])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in gru.parameters()]}
