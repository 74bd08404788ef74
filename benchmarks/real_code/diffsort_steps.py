"""Differentiable sorting networks (Felix-Petersen/diffsort) trained for a few steps on CPU, as the
project's experiments/main.py trains them (a scorer's outputs sorted by `DiffSortNet`, the relaxed
permutation matrix compared with the true one by BCE, Adam), on random numbers instead of
four-digit MNIST (the machine reaches no data set host). Runs bitonic and odd-even networks with
each relaxation, among them the `gaussian` one, a custom `autograd.Function` (`NormalCDF`) whose
forward and backward are written without `@staticmethod` and which saves a tensor it makes in
forward. Prints losses and checksums."""
import torch
from torch import nn
from diffsort import DiffSortNet


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


configurations = [
    ('odd_even', 5, 'cauchy'), ('odd_even', 5, 'gaussian'), ('odd_even', 6, 'logistic_phi'),
    ('bitonic', 8, 'cauchy'), ('bitonic', 8, 'optimal'), ('bitonic', 4, 'reciprocal'), ('bitonic', 8, 'logistic'),
]
for network, size, distribution in configurations:
    name = f'{network}-{size}-{distribution}'
    torch.manual_seed(0)
    scorer = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    sorter = DiffSortNet(network, size, steepness=10.0, distribution=distribution)
    optimizer = torch.optim.Adam(scorer.parameters(), lr=1e-2)
    for step in range(6):
        values = torch.rand(8, size)
        features = torch.stack([values, values ** 2, torch.sin(3 * values), torch.randn(8, size) * 0.1], dim=-1)
        outputs = scorer(features).squeeze(-1)
        sorted_outputs, permutation = sorter(outputs)
        truth = nn.functional.one_hot(torch.argsort(values, dim=-1)).transpose(-2, -1).float()
        loss = nn.BCELoss()(permutation, truth)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(name, step, f'{loss.item():.8f}', f'{sorted_outputs.sum().item():.8f}')
    print(name, 'checksum', checksum(scorer))

# sorting as a layer inside the loss: gradients reach the vector through the relaxed sort itself
torch.manual_seed(3)
vectors = torch.randn(4, 8, requires_grad=True)
sorter = DiffSortNet('bitonic', 8, steepness=5.0, distribution='gaussian')
optimizer = torch.optim.SGD([vectors], lr=0.1)
target = torch.linspace(-1, 1, 8).expand(4, -1)
for step in range(5):
    sorted_vectors, _ = sorter(vectors)
    loss = (sorted_vectors - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print('vector', step, f'{loss.item():.8f}', f'{vectors.grad.abs().sum().item():.8f}')
