"""VariationalRecurrentNeuralNetwork's training loop calls
`nn.utils.clip_grad_norm(model.parameters(), clip)` after
`optimizer.step()`: the step has already used the unclipped gradients and the
next iteration clears them, so clipping never takes effect.  The fix clips
between `loss.backward()` and `optimizer.step()`.
Buggy line: `nn.utils.clip_grad_norm_(model.parameters(), clip)` in `train`.
Source: https://github.com/emited/VariationalRecurrentNeuralNetwork/issues/3"""
import torch
import torch.nn as nn


class VRNN(nn.Module):
    def __init__(self, x_dim=4, h_dim=8, z_dim=2):
        super().__init__()
        self.enc = nn.Linear(x_dim + h_dim, 2 * z_dim)
        self.dec = nn.Linear(z_dim + h_dim, x_dim)
        self.rnn = nn.GRUCell(x_dim + z_dim, h_dim)
        self.h_dim = h_dim

    def forward(self, x):
        h = torch.zeros(x.size(1), self.h_dim)
        kld_loss, nll_loss = 0, 0
        for t in range(x.size(0)):
            mean, logvar = self.enc(torch.cat([x[t], h], 1)).chunk(2, dim=1)
            z = mean + torch.randn_like(mean) * (0.5 * logvar).exp()
            x_hat = self.dec(torch.cat([z, h], 1))
            kld_loss = kld_loss + 0.5 * (mean.pow(2) + logvar.exp() - 1 - logvar).sum()
            nll_loss = nll_loss + (x_hat - x[t]).pow(2).sum()
            h = self.rnn(torch.cat([x[t], z], 1), h)
        return kld_loss, nll_loss


def train(model, optimizer, train_loader, clip=0.01):
    train_loss = 0
    for data in train_loader:
        optimizer.zero_grad()
        kld_loss, nll_loss = model(data)
        loss = kld_loss + nll_loss
        loss.backward()
        optimizer.step()
        nn.utils.clip_grad_norm_(model.parameters(), clip)  # expect: ADL022
        train_loss += loss.item()
    return train_loss


def bug_shows():
    """The step used the unclipped gradient: the parameters differ from a step
    on the clipped gradient, written by hand."""
    torch.manual_seed(0)
    model = VRNN()
    reference = VRNN()
    reference.load_state_dict(model.state_dict())
    data = torch.randn(3, 2, 4)
    torch.manual_seed(1)
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), [data])
    torch.manual_seed(1)
    kld, nll = reference(data)
    (kld + nll).backward()
    nn.utils.clip_grad_norm_(reference.parameters(), 0.01)
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad
    return not all(torch.allclose(a, b) for a, b in zip(model.parameters(), reference.parameters()))
