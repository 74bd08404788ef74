"""pysdtw (toinsson/pysdtw), the README's example: the sequences to align are made with
`X = torch.rand((10, 5, 7), requires_grad=True).to(device)`, the criterion
`sdtw = pysdtw.SoftDTW(gamma=1.0, dist_func=fun, use_cuda=True)` gives `res = sdtw(X, Y)`,
`loss = res.sum(); loss.backward()`, and "X.grad now contains the gradient". It does not:
`.to(device)` returns a copy, a non-leaf, and the leaf that collects the gradient is the
unnamed tensor before it; `X.grad` is `None` (with the "not a leaf Tensor" warning).
Re-created (CPU) with a soft-DTW criterion written from the recursion, a pairwise squared
distance and a descent on the sequences that uses `X.grad`; on CPU the copy comes from the
dtype in the same `.to(...)` call (the report's copy came from the device).
Buggy line: `X = torch.rand(..., requires_grad=True).to(device=device, dtype=dtype)`.
Source: https://github.com/toinsson/pysdtw/issues/2"""
import torch
import torch.nn as nn


def pairwise_l2_squared(x, y):
    return ((x.unsqueeze(2) - y.unsqueeze(1)) ** 2).sum(-1)


class SoftDTW(nn.Module):
    def __init__(self, gamma=1.0, dist_func=pairwise_l2_squared):
        super().__init__()
        self.gamma = gamma
        self.dist_func = dist_func

    def softmin(self, a, b, c):
        stacked = torch.stack([a, b, c], dim=-1)
        return -self.gamma * torch.logsumexp(-stacked / self.gamma, dim=-1)

    def forward(self, x, y):
        d = self.dist_func(x, y)
        n, m = d.shape[1], d.shape[2]
        inf = torch.full((x.shape[0],), float("inf"), dtype=d.dtype)
        r = [[inf] * (m + 1) for _ in range(n + 1)]
        r[0][0] = torch.zeros(x.shape[0], dtype=d.dtype)
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                r[i][j] = d[:, i - 1, j - 1] + self.softmin(r[i - 1][j - 1], r[i - 1][j], r[i][j - 1])
        return r[n][m]


def align(steps=2, lr=0.1, device="cpu", dtype=torch.float64):
    torch.manual_seed(0)
    X = torch.rand((4, 5, 3), requires_grad=True).to(device=device, dtype=dtype)  # missed: ADL020 (X is the moved copy, not the leaf: X.grad stays None)
    Y = torch.rand((4, 6, 3)).to(device=device, dtype=dtype)
    sdtw = SoftDTW(gamma=1.0, dist_func=pairwise_l2_squared)
    for _ in range(steps):
        res = sdtw(X, Y)
        loss = res.sum()
        loss.backward()
        with torch.no_grad():
            X -= lr * X.grad
    return X


run = align


if __name__ == "__main__":
    align()
