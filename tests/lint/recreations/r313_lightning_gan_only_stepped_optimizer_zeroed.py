"""Early PyTorch Lightning ran a GAN's `training_step` once per optimizer and,
for each, called `loss.backward()`, `optimizer.step()` and
`optimizer.zero_grad()` on that optimizer only.  The generator's loss,
`adversarial_loss(self.discriminator(self.generator(z)), valid)`, also fills
the discriminator's gradients; the generator's `zero_grad()` leaves them, so
the discriminator's step that follows uses its own loss's gradient plus the
generator's.  Nothing raises; the reporter found GAN training "simply
broken".  The fix clears all gradients before each backward pass
(`model.zero_grad()`), as Lightning later did.
Buggy line: `optimizer.zero_grad()` in `fit`, which clears only the stepped
optimizer's parameters.
Expected finding: ADL018 (a step reads gradients the loop did not clear).
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/591"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GAN(nn.Module):
    def __init__(self, latent_dim=3):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(latent_dim, 8), nn.ReLU(), nn.Linear(8, 4))
        self.discriminator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.latent_dim = latent_dim

    def configure_optimizers(self):
        opt_g = torch.optim.SGD(self.generator.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)
        return [opt_g, opt_d]

    def training_step(self, batch, batch_idx, optimizer_idx):
        imgs = batch
        z = torch.randn(imgs.shape[0], self.latent_dim)
        valid = torch.ones(imgs.size(0), 1)
        if optimizer_idx == 0:
            return F.binary_cross_entropy_with_logits(self.discriminator(self.generator(z)), valid)
        fake = torch.zeros(imgs.size(0), 1)
        real_loss = F.binary_cross_entropy_with_logits(self.discriminator(imgs), valid)
        fake_loss = F.binary_cross_entropy_with_logits(self.discriminator(self.generator(z).detach()), fake)
        return (real_loss + fake_loss) / 2


def fit(module, batches, d_grads_seen=None):
    optimizers = module.configure_optimizers()
    for batch_idx, batch in enumerate(batches):
        for optimizer_idx, optimizer in enumerate(optimizers):
            loss = module.training_step(batch, batch_idx, optimizer_idx)
            if d_grads_seen is not None and optimizer_idx == 1:
                d_grads_seen.append(module.discriminator[0].weight.grad)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()  # missed: ADL018


def bug_shows():
    """Before its own backward pass the discriminator already holds a gradient
    (the generator loss's), which its step adds to its own."""
    torch.manual_seed(0)
    seen = []
    fit(GAN(), [torch.randn(4, 4)], seen)
    return seen[0] is not None and bool(seen[0].abs().sum() > 0)


def run():
    torch.manual_seed(0)
    fit(GAN(), [torch.randn(4, 4) for _ in range(2)])
