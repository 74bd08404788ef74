"""TimeGAN on multivariate time series, first phase: the embedder and recovery networks are
trained as an autoencoder, and the notebook plots the reconstruction loss live with d2l's
`Animator`. The loss tensor itself is handed to `animator.add(epoch, (E_loss_T0, 0))`; the animator
turns the recorded points into arrays to draw them, and NumPy asks the tensor, which still
requires grad, for its values: "Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead." The change in the pull request: record the number,
`animator.add(epoch, (E_loss_T0.detach().item(), 0))`.
Source: https://github.com/sanj909/Timeseries-GANs/pull/1
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Animator:
    """The part of d2l.Animator this notebook uses: it keeps the points and redraws the curves."""

    def __init__(self, xlabel=None, legend=None):
        self.legend = legend
        self.X, self.Y = None, None
        self.curves = []

    def add(self, x, y):
        if not hasattr(y, "__len__"):
            y = [y]
        n = len(y)
        if not hasattr(x, "__len__"):
            x = [x] * n
        if not self.X:
            self.X = [[] for _ in range(n)]
        if not self.Y:
            self.Y = [[] for _ in range(n)]
        for i, (a, b) in enumerate(zip(x, y)):
            if a is not None and b is not None:
                self.X[i].append(a)
                self.Y[i].append(b)
        # what matplotlib's plot(x, y) does with the points before drawing them
        self.curves = [(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)) for xs, ys in zip(self.X, self.Y)]


class Embedder(nn.Module):
    def __init__(self, feature_dim, hidden_dim):
        super().__init__()
        self.rnn = nn.GRU(feature_dim, hidden_dim, batch_first=True)
        self.fc = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, X):
        H, _ = self.rnn(X)
        return torch.sigmoid(self.fc(H))


class Recovery(nn.Module):
    def __init__(self, hidden_dim, feature_dim):
        super().__init__()
        self.rnn = nn.GRU(hidden_dim, hidden_dim, batch_first=True)
        self.fc = nn.Linear(hidden_dim, feature_dim)

    def forward(self, H):
        H_tilde, _ = self.rnn(H)
        return torch.sigmoid(self.fc(H_tilde))


def train_autoencoder(embedder, recovery, data, num_epochs, lr=1e-3):
    optimizer = torch.optim.Adam(list(embedder.parameters()) + list(recovery.parameters()), lr=lr)
    mse = nn.MSELoss()
    animator = Animator(xlabel="epoch", legend=["E_loss"])
    for epoch in range(num_epochs):
        X = data[torch.randint(0, data.shape[0], (8,))]
        optimizer.zero_grad()
        H = embedder(X)
        X_tilde = recovery(H)
        E_loss_T0 = mse(X, X_tilde)
        E_loss0 = 10 * torch.sqrt(E_loss_T0)
        E_loss0.backward()
        optimizer.step()
        animator.add(epoch, (E_loss_T0, 0))
    return animator


data = torch.rand(32, 12, 3)
embedder, recovery = Embedder(3, 6), Recovery(6, 3)
animator = train_autoencoder(embedder, recovery, data, num_epochs=4)

result = {"curve": torch.tensor(animator.curves[0][1]),
          "weights": [p.detach().clone() for p in list(embedder.parameters()) + list(recovery.parameters())]}
