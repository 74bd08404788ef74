# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given
#   that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by
#   moving both the view and the inplace either both inside the no_grad block (if you don't want the
#   inplace to be tracked) or both outside (if you want the inplace to be tracked).
# code: AD105 (catalogue: view_nograd_inplace)
# set: 10
# trigger: a Gaussian head's forward takes the diagonal of its feature covariance (cov.diagonal(),
#   a view) inside the torch.no_grad() block that logs the variances, then adds a learned jitter
#   to that diagonal in place before the Cholesky factorisation
# source: none found; the pattern as users write it (jitter on a covariance's diagonal before cholesky)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class GaussianHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(3, 4)
        self.raw_jitter = nn.Parameter(torch.zeros(4))
        self.logged_variances = []

    def forward(self, x):
        h = self.features(x)
        cov = h.T @ h / x.shape[0]
        with torch.no_grad():
            variances = cov.diagonal()  # PRIMARY
            self.logged_variances.append(variances.mean().item())
        variances += F.softplus(self.raw_jitter)
        return torch.linalg.cholesky(cov)


torch.manual_seed(0)
model = GaussianHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    factor = model(x)
    loss = factor.diagonal().log().sum() + factor.pow(2).sum() * 0.1
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
