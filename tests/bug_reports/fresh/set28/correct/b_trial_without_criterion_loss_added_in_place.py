"""A variational autoencoder trained with a small training framework (a `Trial` that runs the
model, computes the loss with a criterion and fires callbacks). The VAE has no single criterion:
the user passes `criterion=None` and adds the two ELBO terms (reconstruction and KL divergence)
with `@add_to_loss` callbacks. Without a criterion the framework starts the loss at
`torch.zeros(1, requires_grad=True)` (so that a trial without any loss term can still call
backward), and the framework's `add_to_loss` adds each term with `state[LOSS] += func(state)`:
the first `+=` writes into that leaf and raises "a leaf Variable that requires grad is being used
in an in-place operation."
Source: https://github.com/pytorchbearer/torchbearer/issues/431 ("Adding to loss from none
criterion gives inplace modifying leaf node error"; fixed by
https://github.com/pytorchbearer/torchbearer/pull/432: the callback now does
`state[torchbearer.LOSS] = state[torchbearer.LOSS] + func(state)`)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# --- the framework -------------------------------------------------------------------------
MODEL, X, Y_TRUE, Y_PRED, LOSS, MU, LOGVAR = "model", "x", "y_true", "y_pred", "loss", "mu", "logvar"


class Callback:
    def on_criterion(self, state):
        pass


def add_to_loss(func):
    """Callback whose `on_criterion` adds the value returned by func(state) to the loss."""
    callback = Callback()

    def add_to_loss_callback(state):
        state[LOSS] = state[LOSS] + func(state)

    callback.on_criterion = add_to_loss_callback
    return callback


def _none_criterion(y_pred, y_true):
    return torch.zeros(1, requires_grad=True)


class Trial:
    def __init__(self, model, optimizer, criterion=None, callbacks=()):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion if criterion is not None else _none_criterion
        self.callbacks = list(callbacks)
        self.history = []

    def run(self, loader, epochs=1):
        state = {MODEL: self.model}
        for _ in range(epochs):
            for x, _y in loader:
                state[X], state[Y_TRUE] = x, x
                self.optimizer.zero_grad()
                state[Y_PRED] = self.model(x, state)
                state[LOSS] = self.criterion(state[Y_PRED], state[Y_TRUE])
                for callback in self.callbacks:
                    callback.on_criterion(state)
                state[LOSS].backward()
                self.optimizer.step()
                self.history.append(state[LOSS].detach().reshape(()))
        return self.history


# --- the user's VAE --------------------------------------------------------------------------
class VAE(nn.Module):
    def __init__(self, d_in=12, d_hidden=32, d_latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU())
        self.mu = nn.Linear(d_hidden, d_latent)
        self.logvar = nn.Linear(d_hidden, d_latent)
        self.dec = nn.Sequential(nn.Linear(d_latent, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_in))

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def forward(self, x, state):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        state[MU], state[LOGVAR] = mu, logvar
        return torch.sigmoid(self.dec(self.reparameterize(mu, logvar)))


@add_to_loss
def reconstruction_loss(state):
    return F.binary_cross_entropy(state[Y_PRED], state[Y_TRUE], reduction="sum") / state[X].size(0)


@add_to_loss
def kl_divergence(state):
    mu, logvar = state[MU], state[LOGVAR]
    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / mu.size(0)


data = (torch.rand(64, 12) > 0.5).float()
loader = [(data[i:i + 16], None) for i in range(0, 64, 16)]
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
trial = Trial(model, optimizer, criterion=None, callbacks=[reconstruction_loss, kl_divergence])
history = trial.run(loader, epochs=3)

result = {"losses": torch.stack(history), "params": [p.detach().clone() for p in model.parameters()]}
print("final loss", history[-1].item())
