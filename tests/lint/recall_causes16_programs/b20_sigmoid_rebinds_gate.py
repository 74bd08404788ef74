"""A gate squashed into (0, 1) by re-binding its own name; the update reads
`gate.grad`, which is None (the leaf it belonged to is lost).  Raises a
TypeError at the update."""
import torch


def run():
    torch.manual_seed(0)
    target = torch.tensor([0.2, 0.9, 0.5])
    gate = torch.zeros(3, requires_grad=True)
    gate = torch.sigmoid(gate)
    loss = ((gate - target) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        step = 0.1 * gate.grad  # bug
    return step
