"""A word-level language model with fastai's `WeightDropout` (DropConnect on the hidden-to-hidden
weight, as in AWD-LSTM): `_setweights` stores the dropped-out weight, the result of
`F.dropout(raw_w, ...)`, back into the wrapped module's `_parameters`. After one forward pass (a
shape check before training), `model.parameters()` yields that non-leaf tensor and building the
optimizer fails with "can't optimize a non-leaf Tensor".
Source: https://github.com/pytorch/pytorch/issues/38198 ("ValueError: can't optimize a non-leaf
Tensor" with the WeightDropout borrowed from fastai; the same code in fastai#2591: the dropped-out
weight must be a plain attribute, not a parameter: delete it from `_parameters` and `setattr` it).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, HIDDEN = 12, 8


class WeightDropout(nn.Module):
    "A module that wraps another layer in which some weights will be replaced by 0 during training."

    def __init__(self, module, weight_p, layer_names=("weight",)):
        super().__init__()
        self.module, self.weight_p, self.layer_names = module, weight_p, layer_names
        for layer in self.layer_names:
            w = getattr(self.module, layer)
            self.register_parameter(f"{layer}_raw", nn.Parameter(w.data))
            self.module._parameters[layer] = F.dropout(w, p=self.weight_p, training=False)

    def _setweights(self):
        for layer in self.layer_names:
            raw_w = getattr(self, f"{layer}_raw")
            self.module._parameters[layer] = F.dropout(raw_w, p=self.weight_p, training=self.training)

    def forward(self, *args):
        self._setweights()
        return self.module(*args)


class RNNLanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.ih = nn.Linear(HIDDEN, HIDDEN)
        self.hh = WeightDropout(nn.Linear(HIDDEN, HIDDEN, bias=False), weight_p=0.5)
        self.decoder = nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids):
        h = torch.zeros(ids.shape[0], HIDDEN)
        outputs = []
        for t in range(ids.shape[1]):
            h = torch.tanh(self.ih(self.embed(ids[:, t])) + self.hh(h))
            outputs.append(self.decoder(h))
        return torch.stack(outputs, dim=1)


model = RNNLanguageModel()
data = torch.randint(0, VOCAB, (4, 7))
assert model(data[:, :-1]).shape == (4, 6, VOCAB)  # shape check before training
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
losses = []
for step in range(3):
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
