"""A sentence-pair (SNLI) classifier whose number of hidden layers is an option: `__init__` builds
the layers in a loop and keeps them in a plain Python list, `self.hids = []` and
`self.hids.append([nn.Linear(...), nn.Tanh()])`. A list is not a registered container, so the
hidden layers are missing from `model.parameters()`: the optimizer never sees them, they stay at
their random initialisation while the forward pass still runs through them, and only the embedding
and the classifier learn (no error, no warning).
Source: https://github.com/pytorch/pytorch/issues/715 ("Module: parameters are not included if the
module is initialized in a list": `self.hids = []` ... "The parameters of nn.Linear in the for-loop
are not included in parameters"; answer: "wrap them in nn.ModuleList and assign that as
self.hids. This will register them properly.").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, N_HID, N_LAYERS = 50, 16, 2


class SNLINet(nn.Module):
    def __init__(self, n_hid=N_HID, n_layers=N_LAYERS, act="Tanh"):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, n_hid)
        self.hids = []
        for li in range(n_layers):
            self.hids.append([nn.Linear(2 * n_hid if li == 0 else n_hid, n_hid), getattr(nn, act)()])
        self.classifier = nn.Linear(n_hid, 3)

    def forward(self, premise, hypothesis):
        p = self.embed(premise).mean(1)
        h = self.embed(hypothesis).mean(1)
        x = torch.cat([p * h, (p - h).abs()], dim=1)
        for linear, activation in self.hids:
            x = activation(linear(x))
        return self.classifier(x)


model = SNLINet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

premises = torch.randint(0, VOCAB, (32, 7))
hypotheses = torch.randint(0, VOCAB, (32, 5))
labels = torch.randint(0, 3, (32,))

losses = []
for epoch in range(8):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(premises, hypotheses), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "embedding": model.embed.weight.detach().clone(),
          "hidden": [p.detach().clone() for layer in model.hids for p in layer[0].parameters()],
          "classifier": [p.detach().clone() for p in model.classifier.parameters()]}
