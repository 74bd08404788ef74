"""TabNet regressor with a custom RMSE loss: the sparsity term subtracted in place after sqrt saved its output.
Source: https://github.com/dreamquark-ai/tabnet/issues/312 (PR #323: subtract out of place)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class AttentiveStep(nn.Module):
    """One decision step: a feature mask from the prior, then a feature transformer."""

    def __init__(self, n_features, n_hidden):
        super().__init__()
        self.attention = nn.Linear(n_hidden, n_features)
        self.transformer = nn.Sequential(nn.Linear(n_features, n_hidden), nn.ReLU())

    def forward(self, x, hidden, prior):
        mask = torch.softmax(self.attention(hidden) * prior, dim=-1)
        return self.transformer(x * mask), mask


class TabNet(nn.Module):
    def __init__(self, n_features=8, n_hidden=16, n_steps=3, gamma=1.3):
        super().__init__()
        self.initial = nn.Sequential(nn.Linear(n_features, n_hidden), nn.ReLU())
        self.steps = nn.ModuleList([AttentiveStep(n_features, n_hidden) for _ in range(n_steps)])
        self.head = nn.Linear(n_hidden, 1)
        self.gamma = gamma

    def forward(self, x):
        hidden = self.initial(x)
        prior = torch.ones_like(x)
        out = torch.zeros_like(hidden)
        M_loss = 0
        for step in self.steps:
            hidden, mask = step(x, hidden, prior)
            M_loss = M_loss + torch.mean(torch.sum(-mask * torch.log(mask + 1e-15), dim=1))
            prior = prior * (self.gamma - mask)
            out = out + hidden
        return self.head(out), M_loss / len(self.steps)


class RMSELoss(nn.Module):
    def forward(self, x, y):
        criterion = nn.MSELoss()
        eps = 1e-6
        return torch.sqrt(criterion(x, y) + eps)


class TabNetRegressor:
    def __init__(self, loss_fn, lambda_sparse=1e-3):
        self.network = TabNet()
        self.loss_fn = loss_fn
        self.lambda_sparse = lambda_sparse
        self._optimizer = torch.optim.Adam(self.network.parameters(), lr=2e-2)

    def compute_loss(self, y_pred, y_true):
        return self.loss_fn(y_pred, y_true)

    def _train_batch(self, X, y):
        self._optimizer.zero_grad()
        output, M_loss = self.network(X)
        loss = self.compute_loss(output, y)
        # Add the overall sparsity loss
        loss = loss - self.lambda_sparse * M_loss
        loss.backward()
        self._optimizer.step()
        return loss.detach()


X_train = torch.randn(64, 8)
y_train = X_train[:, :2].sum(dim=1, keepdim=True) + 0.1 * torch.randn(64, 1)
clf = TabNetRegressor(loss_fn=RMSELoss())
losses = [clf._train_batch(X_train, y_train) for _ in range(4)]
result = {"losses": losses, "params": [p.detach().clone() for p in clf.network.parameters()]}
