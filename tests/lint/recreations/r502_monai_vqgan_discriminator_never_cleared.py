"""MONAI GenerativeModels' 2D VQGAN tutorial trains a VQ-VAE generator
against a patch discriminator.  The generator's adversarial loss runs
through the discriminator (`discriminator(reconstruction)`), so
`loss_g.backward()` also fills the discriminator's `.grad`; the
discriminator's part of the loop then backpropagates its own loss and steps
`optimizer_d` without `optimizer_d.zero_grad()`: "it is missing the
zero_grad for the discriminator optimizer".  Each discriminator step applies
its gradient plus the generator loss's and every earlier one.  Nothing raises.
Buggy line: `optimizer_d.step()` with no `optimizer_d.zero_grad()` in the loop.
Source: https://github.com/Project-MONAI/GenerativeModels/issues/102"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VQVAE(nn.Module):
    def __init__(self, d=8, codes=4):
        super().__init__()
        self.encoder = nn.Linear(d, 4)
        self.codebook = nn.Parameter(torch.randn(codes, 4))
        self.decoder = nn.Linear(4, d)

    def forward(self, images):
        z = self.encoder(images)
        idx = torch.cdist(z, self.codebook).argmin(1)
        q = self.codebook[idx]
        quantization_loss = F.mse_loss(q, z.detach()) + 0.25 * F.mse_loss(z, q.detach())
        q = z + (q - z).detach()
        return self.decoder(q), quantization_loss


class PatchDiscriminator(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(d, 8), nn.LeakyReLU(0.2)), nn.Linear(8, 1)])

    def forward(self, x):
        out = [x]
        for layer in self.layers:
            out.append(layer(out[-1]))
        return out[1:]


class PatchAdversarialLoss:
    def __call__(self, logits, target_is_real, for_discriminator):
        target = torch.ones_like(logits) if target_is_real else torch.zeros_like(logits)
        return F.mse_loss(logits, target)


def train(model, discriminator, train_loader, n_epochs=1, adv_weight=0.01, record=None):
    optimizer_g = torch.optim.Adam(model.parameters(), lr=1e-4)
    optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=5e-4)
    adv_loss = PatchAdversarialLoss()
    l1_loss = nn.L1Loss()
    for epoch in range(n_epochs):
        model.train()
        discriminator.train()
        for step, images in enumerate(train_loader):
            optimizer_g.zero_grad(set_to_none=True)
            reconstruction, quantization_loss = model(images)
            logits_fake = discriminator(reconstruction.contiguous().float())[-1]
            recons_loss = l1_loss(reconstruction.float(), images.float())
            generator_loss = adv_loss(logits_fake, target_is_real=True, for_discriminator=False)
            loss_g = recons_loss + quantization_loss + adv_weight * generator_loss
            loss_g.backward()  # expect: ADL024
            optimizer_g.step()

            # Discriminator part
            logits_fake = discriminator(reconstruction.contiguous().detach())[-1]
            loss_d_fake = adv_loss(logits_fake, target_is_real=False, for_discriminator=True)
            logits_real = discriminator(images.contiguous().detach())[-1]
            loss_d_real = adv_loss(logits_real, target_is_real=True, for_discriminator=True)
            discriminator_loss = (loss_d_fake + loss_d_real) * 0.5
            loss_d = adv_weight * discriminator_loss
            if record is not None:
                before = discriminator.layers[1].weight.grad
                record.append(None if before is None else before.clone())
            loss_d.backward()
            optimizer_d.step()


def bug_shows():
    """Before the discriminator's backward its .grad is not empty: it holds the generator loss's gradient."""
    torch.manual_seed(0)
    record = []
    train(VQVAE(), PatchDiscriminator(), [torch.randn(4, 8) for _ in range(2)], record=record)
    return record[0] is not None and record[0].abs().sum().item() > 0
