"""A Chinese article on "one of the variables needed for gradient
computation has been modified by an inplace operation" explains that a
tensor needed by backward must not be modified in place and that this error
appears in model code as index assignments on activations.  Re-created as a
gated layer in that style: the gate is `torch.sigmoid(...)` and padded
positions are then zeroed by an index assignment on the gate itself, whose
value `sigmoid`'s backward saved.  Raises at the first backward.
Buggy line: `gate[mask] = 0` (writes the output `sigmoid` saved).
Source: https://geek-docs.com/pytorch/pytorch-questions/518_pytorch_runtimeerror_one_of_the_variables_needed_for_gradient_computation_has_been_modified_by_an_inplace_operation.html"""
import torch
import torch.nn as nn


class GatedLayer(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate_proj = nn.Linear(dim, dim)

    def forward(self, x, mask):
        gate = torch.sigmoid(self.gate_proj(x))
        gate[mask] = 0  # expect: ADL001
        return gate * self.proj(x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = GatedLayer()
        self.head = nn.Linear(6, 2)

    def forward(self, x, mask):
        return self.head(self.layer(x, mask).sum(dim=1))


def train_step(model, optimizer, x, mask, y):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x, mask), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    model = Encoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(3, 4, 6)
    mask = torch.zeros(3, 4, dtype=torch.bool)
    mask[:, -1] = True
    train_step(model, optimizer, x, mask, torch.tensor([0, 1, 0]))
