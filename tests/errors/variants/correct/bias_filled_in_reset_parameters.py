# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 11
# trigger: a hand-written layer initialises its parameters in a reset_parameters() method called
#   from __init__ (as nn.Linear does); the weight goes through nn.init, but the bias is filled with
#   self.bias.fill_(0.1) outside torch.no_grad()
# source: none found; the pattern as users write it (reset_parameters copied from nn.Linear, the
#   bias line written by hand)
# results: losses, model
import torch
from torch import nn


class ShiftedLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        self.bias = nn.Parameter(torch.empty(n_out))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.weight)
        with torch.no_grad():  # PRIMARY
            self.bias.fill_(0.1)

    def forward(self, x):
        return x @ self.weight.T + self.bias


torch.manual_seed(0)
model = nn.Sequential(ShiftedLinear(3, 4), nn.Tanh(), ShiftedLinear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
