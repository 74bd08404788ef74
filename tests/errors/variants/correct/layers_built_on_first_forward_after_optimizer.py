# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# set: 13
# trigger: a Keras-style model builds its layers on the first forward(), when the input size is known;
#   the optimizer is made right after the model, before any forward, from its (still empty) parameters
# source: none found; the pattern as users write it (lazy build() methods)
# results: model, losses
import torch
from torch import nn


class LazyRegressor(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.body = None

    def build(self, x):
        self.body = nn.Sequential(nn.Linear(x.shape[-1], self.hidden), nn.Tanh(), nn.Linear(self.hidden, 1))

    def forward(self, x):
        if self.body is None:
            self.build(x)
        return self.body(x)


torch.manual_seed(0)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
model = LazyRegressor(hidden=5)
model.build(batches[0][0])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # PRIMARY
losses = []
for x, y in batches:
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
