"""A Gaussian policy's spread: the script optimizes `std = torch.exp(log_std)`,
a non-leaf made by a torch function of the leaf.  Raises "can't optimize a
non-leaf Tensor"."""
import torch


def run():
    torch.manual_seed(0)
    log_std = torch.zeros(4, requires_grad=True)
    std = torch.exp(log_std)
    opt = torch.optim.Adam([std], lr=0.01)  # bug
    actions = torch.randn(16, 4)
    for _ in range(2):
        nll = (0.5 * (actions / std) ** 2 + std.log()).sum()
        opt.zero_grad()
        nll.backward()
        opt.step()
