"""torchnca's `NCA._init_transformation` makes the learned linear map with
`self.A = torch.nn.Parameter(a).to(self.device)`: on a GPU `.to()` returns a
copy made by an autograd op, not the Parameter, so `self.A` is a non-leaf and
`torch.optim.SGD([self.A], ...)` in `train()` raises "ValueError: can't
optimize a non-leaf Tensor" (the dim_reduct example run on CUDA data).
Re-created as the class (init, loss over pairwise distances, train loop);
the move follows the data's device and dtype, and the data come from NumPy
as float64, so on the CPU `.to()` also has to copy (float32 -> float64), as
the CUDA move did.
Buggy line: `self.A = torch.nn.Parameter(a).to(self.device, self.dtype)`.
Source: https://github.com/kevinzakka/torchnca/issues/5"""
import numpy as np
import torch


class NCA:
    def __init__(self, dim=None, init="random", max_iters=3, tol=1e-5):
        self.dim = dim
        self.init = init
        self.max_iters = max_iters
        self.tol = tol

    def _init_transformation(self):
        if self.dim is None:
            self.dim = self.num_dims
        if self.init == "random":
            a = torch.randn(self.dim, self.num_dims) * 0.01
            self.A = torch.nn.Parameter(a).to(self.device, self.dtype)  # missed: ADL020
        elif self.init == "identity":
            a = torch.eye(self.dim, self.num_dims)
            self.A = torch.nn.Parameter(a).to(self.device, self.dtype)
        else:
            raise ValueError("[!] {} initialization is not supported.".format(self.init))

    @staticmethod
    def _pairwise_l2_sq(x):
        dot = torch.mm(x, torch.t(x))
        norm_sq = torch.diag(dot)
        return torch.clamp(norm_sq[None, :] - 2 * dot + norm_sq[:, None], min=0)

    def loss(self, X, y_mask):
        embedding = torch.mm(X, torch.t(self.A))
        distances = self._pairwise_l2_sq(embedding)
        distances = distances + torch.diag(torch.full((len(distances),), float("inf"), dtype=distances.dtype))
        p_ij = torch.softmax(-distances, dim=1)
        p_i = (p_ij * y_mask.to(p_ij.dtype)).sum(dim=1)
        return -torch.log(torch.masked_select(p_i, p_i != 0)).sum()

    def train(self, X, y, lr=1e-4, momentum=0.9, weight_decay=10):
        self.num_train, self.num_dims = X.shape
        self.device = X.device
        self.dtype = X.dtype
        self._init_transformation()
        optimizer = torch.optim.SGD([self.A], lr=lr, weight_decay=weight_decay, momentum=momentum)
        for epoch in range(self.max_iters):
            y_mask = y[:, None] == y[None, :]
            optimizer.zero_grad()
            loss = self.loss(X, y_mask)
            loss.backward()
            optimizer.step()


def run():
    rng = np.random.RandomState(0)
    X = torch.from_numpy(rng.randn(30, 3))
    y = torch.from_numpy(rng.randint(0, 3, size=30))
    nca = NCA(dim=2)
    nca.train(X, y)
