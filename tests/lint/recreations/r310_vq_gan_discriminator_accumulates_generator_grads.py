"""OmniTokenizer trains a VQ autoencoder against a discriminator with
gradient accumulation: each micro-batch backpropagates the generator loss,
whose adversarial term runs `self.discriminator(recon)`, and then the
discriminator loss; the optimizers step and clear every `accumulate` steps.
Since nothing clears the discriminator's gradients between the generator's
backward pass and its own, its step follows the generator's adversarial
gradient too (the sum of both losses' gradients instead of its own).  Nothing
raises.  The fix clears the discriminator's gradients after the generator's
backward (or freezes its parameters during it).
Buggy line: `g_loss.backward()` in `train`, which fills the discriminator's
`.grad` that `opt_d.step()` then reads.
Expected finding: ADL024 at that backward (the generator loss reaches the
discriminator, whose optimizer steps with no clear between).
Source: https://github.com/FoundationVision/OmniTokenizer/issues/15"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VQAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 3)
        self.decoder = nn.Linear(3, 6)

    def forward(self, x):
        return self.decoder(torch.tanh(self.encoder(x)))


def hinge_d_loss(logits_real, logits_fake):
    return 0.5 * (F.relu(1.0 - logits_real).mean() + F.relu(1.0 + logits_fake).mean())


def train(model, discriminator, opt_ae, opt_d, batches, accumulate=2, d_grads_seen=None):
    for step, x in enumerate(batches):
        recon = model(x)
        logits_fake = discriminator(recon)
        g_loss = F.mse_loss(recon, x) - 0.1 * logits_fake.mean()
        g_loss.backward()  # expect: ADL024
        logits_real = discriminator(x)
        logits_fake = discriminator(recon.detach())
        d_loss = hinge_d_loss(logits_real, logits_fake)
        d_loss.backward()
        if d_grads_seen is not None:
            d_grads_seen.append(discriminator.weight.grad.clone())
        if (step + 1) % accumulate == 0:
            opt_ae.step()
            opt_d.step()
            opt_ae.zero_grad()
            opt_d.zero_grad()


def bug_shows():
    """The discriminator's gradient is not the gradient of its own loss."""
    torch.manual_seed(0)
    model, discriminator = VQAutoencoder(), nn.Linear(6, 1)
    opt_ae = torch.optim.Adam(model.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    x = torch.randn(4, 6)
    seen = []
    train(model, discriminator, opt_ae, opt_d, [x], accumulate=1, d_grads_seen=seen)
    torch.manual_seed(0)
    model, discriminator = VQAutoencoder(), nn.Linear(6, 1)
    recon = model(x)
    d_loss = hinge_d_loss(discriminator(x), discriminator(recon.detach()))
    own = torch.autograd.grad(d_loss, discriminator.weight)[0]
    return not torch.allclose(seen[0], own)


def run():
    torch.manual_seed(0)
    model, discriminator = VQAutoencoder(), nn.Linear(6, 1)
    opt_ae = torch.optim.Adam(model.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    train(model, discriminator, opt_ae, opt_d, [torch.randn(4, 6) for _ in range(4)])
