"""PreDiff's VAE training script accumulates gradients over several
micro-batches and steps the optimizer when the accumulation window is full,
but it called `optimizer.zero_grad()` after every micro-batch, outside the
`if` that steps: each step used only the last micro-batch's gradient ("the
accumulated gradient in computation graphs will be erased"; fixed in #33).
Nothing raises.  The fix clears the gradients only after the step, inside the
`if`.
Buggy line: `optimizer.zero_grad()` after the `if` in `train_vae`.
Expected finding: ADL018 there (a clear that empties the accumulation window;
the run-time doctor reports a clear inside a window too).
Source: https://github.com/gaozhihan/PreDiff/issues/32"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 4)
        self.decoder = nn.Linear(2, 6)

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.decoder(z), mu, logvar


def vae_loss(recon, x, mu, logvar):
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    return F.mse_loss(recon, x) + 1e-3 * kl


def train_vae(model, optimizer, batches, accumulate_grad_batches=2):
    for batch_idx, x in enumerate(batches):
        recon, mu, logvar = model(x)
        loss = vae_loss(recon, x, mu, logvar) / accumulate_grad_batches
        loss.backward()
        if (batch_idx + 1) % accumulate_grad_batches == 0:
            optimizer.step()
        optimizer.zero_grad()  # expect: ADL018


def bug_shows():
    """The step uses the last micro-batch's gradient only, not the sum over
    the window."""
    torch.manual_seed(2)
    batches = [torch.randn(3, 6) for _ in range(2)]
    torch.manual_seed(0)
    model = TinyVAE()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    before = model.decoder.weight.detach().clone()
    torch.manual_seed(1)
    train_vae(model, optimizer, batches)
    applied = before - model.decoder.weight.detach()
    torch.manual_seed(0)
    reference = TinyVAE()
    torch.manual_seed(1)
    total = None
    for x in batches:
        recon, mu, logvar = reference(x)
        grad = torch.autograd.grad(vae_loss(recon, x, mu, logvar) / 2, reference.decoder.weight)[0]
        total = grad if total is None else total + grad
    return not torch.allclose(applied, total, atol=1e-6)
