"""`shifted = bias + 1.0` before the epochs: an addition saves nothing for backward, so the graph
each epoch goes through again has nothing to free, and the program runs."""
import torch


def main(epochs=3):
    torch.manual_seed(0)
    x = torch.randn(32, 3)
    y = x + 2.0
    bias = torch.zeros(3, requires_grad=True)
    shifted = bias + 1.0
    for epoch in range(epochs):
        loss = ((x + shifted - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            bias -= 0.1 * bias.grad
            bias.grad.zero_()
    return bias.detach().clone()
