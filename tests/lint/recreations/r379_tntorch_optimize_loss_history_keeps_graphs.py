"""tntorch's `optimize` fits tensor-network cores by gradient descent and
records its progress in `loss_history`, appending the loss tensor returned
by the user's loss function: every recorded loss keeps its graph, and in a
thousand iterations fitting a 100x100 picture the history filled 12 GB of
memory.  Nothing raises.  The fix records `loss.item()` (the PR also fixed
device handling, not re-created here).
Buggy line: `loss_history.append(loss)` in `optimize`.
Source: https://github.com/rballester/tntorch/pull/19"""
import torch


class TT:
    """A small tensor train: cores of shape (r0, n, r1) multiplied out."""

    def __init__(self, shape, rank):
        ranks = [1] + [rank] * (len(shape) - 1) + [1]
        self.cores = [torch.randn(ranks[i], n, ranks[i + 1]).mul_(0.5).requires_grad_() for i, n in enumerate(shape)]

    def full(self):
        out = self.cores[0]
        for core in self.cores[1:]:
            out = torch.tensordot(out, core, dims=([out.dim() - 1], [0]))
        return out.squeeze(0).squeeze(-1)


def optimize(tensors, loss_function, optimizer=torch.optim.Adam, tol=1e-6, max_iter=50):
    parameters = [core for t in tensors for core in t.cores]
    optimizer = optimizer(parameters, lr=1e-2)
    loss_history = []
    for _ in range(max_iter):
        optimizer.zero_grad()
        loss = loss_function(*tensors)
        loss_history.append(loss)  # expect: ADL023
        loss.backward()
        optimizer.step()
        if len(loss_history) >= 2 and abs(loss_history[-1].item() - loss_history[-2].item()) < tol:
            break
    return loss_history


def bug_shows():
    """The history keeps graph tensors, one per iteration, instead of floats."""
    torch.manual_seed(0)
    target = torch.randn(4, 5, 6)
    t = TT(target.shape, rank=3)
    history = optimize([t], lambda t: ((t.full() - target) ** 2).mean(), max_iter=5)
    return all(torch.is_tensor(h) and h.grad_fn is not None for h in history)
