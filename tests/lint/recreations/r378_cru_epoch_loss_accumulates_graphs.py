"""The Continuous Recurrent Units trainer sums each batch's loss into the
epoch's total with `epoch_ll += loss`, the loss tensor itself: the total is a
graph tensor holding every batch's graph until the epoch ends, and memory use
grew until the system hung.  Nothing raises.  The fix adds `loss.item()`.
Buggy line: `epoch_ll += loss` in `CRUTrainer.train_epoch`.
Source: https://github.com/boschresearch/Continuous-Recurrent-Units/pull/4"""
import torch
import torch.nn as nn


def gaussian_nll(target, mean, var):
    return 0.5 * (torch.log(var) + (target - mean) ** 2 / var).mean()


class CRU(nn.Module):
    def __init__(self, obs_dim=3, latent_dim=8):
        super().__init__()
        self.cell = nn.GRUCell(obs_dim, latent_dim)
        self.mean_head = nn.Linear(latent_dim, obs_dim)
        self.var_head = nn.Linear(latent_dim, obs_dim)

    def forward(self, obs):
        h = torch.zeros(obs.size(0), self.cell.hidden_size)
        means, variances = [], []
        for t in range(obs.size(1)):
            h = self.cell(obs[:, t], h)
            means.append(self.mean_head(h))
            variances.append(nn.functional.softplus(self.var_head(h)) + 1e-4)
        return torch.stack(means, 1), torch.stack(variances, 1)


class CRUTrainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def train_epoch(self, dl):
        epoch_ll = 0
        for i, (obs, truth) in enumerate(dl):
            output_mean, output_var = self.model(obs)
            loss = gaussian_nll(truth, output_mean, output_var)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            epoch_ll += loss  # expect: ADL023
        return epoch_ll / (i + 1)


def bug_shows():
    """The epoch's average is a graph tensor reaching every batch's graph."""
    torch.manual_seed(0)
    trainer = CRUTrainer(CRU())
    batches = [(torch.randn(2, 4, 3), torch.randn(2, 4, 3)) for _ in range(3)]
    return trainer.train_epoch(batches).grad_fn is not None
