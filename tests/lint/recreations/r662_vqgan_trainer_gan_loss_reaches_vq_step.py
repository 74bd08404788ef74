"""pytorch-vqgan (Shubhamai/pytorch-vqgan), trainer/vqgan.py `VQGANTrainer.step`: the VQ loss and
the discriminator loss are built from one forward (`disc_fake = self.discriminator(decoded_images)`,
not detached), then `self.opt_vq.zero_grad(); vq_loss.backward(retain_graph=True)`,
`self.opt_disc.zero_grad(); gan_loss.backward()`, and only then `self.opt_vq.step();
self.opt_disc.step()`. The discriminator's hinge loss also flows back through `decoded_images`
into the encoder, codebook and decoder, so the VQ step applies the sum of the VQ gradient and the
discriminator-loss gradient ("the gradients of G are affected by the gradients of D(G(z))").
Nothing fails. A commenter's fix: detach the decoded images for the discriminator loss.
Re-created with a tiny VQ autoencoder, a patch discriminator and the trainer's step.
Buggy line: `gan_loss.backward()` (its graph reaches the VQ model; `disc_fake` is not detached).
Source: https://github.com/Shubhamai/pytorch-vqgan/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyVQGAN(nn.Module):
    def __init__(self, ch=3, d=4, k=8):
        super().__init__()
        self.encoder = nn.Conv2d(ch, d, 3, padding=1)
        self.codebook = nn.Embedding(k, d)
        self.decoder = nn.Conv2d(d, ch, 3, padding=1)

    def forward(self, imgs):
        z = self.encoder(imgs)
        flat = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        idx = torch.cdist(flat, self.codebook.weight).argmin(1)
        zq = self.codebook(idx).view(z.shape[0], z.shape[2], z.shape[3], -1).permute(0, 3, 1, 2)
        q_loss = F.mse_loss(zq, z.detach()) + 0.25 * F.mse_loss(z, zq.detach())
        zq = z + (zq - z).detach()
        return self.decoder(zq), idx, q_loss


class Discriminator(nn.Module):
    def __init__(self, ch=3):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(ch, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class VQGANTrainer:
    def __init__(self, model, learning_rate=1e-3):
        self.vqgan = model
        self.discriminator = Discriminator()
        self.opt_vq = torch.optim.Adam(list(self.vqgan.encoder.parameters()) + list(self.vqgan.decoder.parameters())
                                       + list(self.vqgan.codebook.parameters()), lr=learning_rate)
        self.opt_disc = torch.optim.Adam(self.discriminator.parameters(), lr=learning_rate)

    def losses(self, imgs):
        decoded_images, _, q_loss = self.vqgan(imgs)
        rec_loss = torch.abs(imgs - decoded_images).mean()
        disc_real = self.discriminator(imgs)
        disc_fake = self.discriminator(decoded_images)
        g_loss = -torch.mean(disc_fake)
        vq_loss = rec_loss + q_loss + 0.1 * g_loss
        d_loss_real = torch.mean(F.relu(1.0 - disc_real))
        d_loss_fake = torch.mean(F.relu(1.0 + disc_fake))
        gan_loss = 0.5 * (d_loss_real + d_loss_fake)
        return vq_loss, gan_loss

    def step(self, imgs):
        vq_loss, gan_loss = self.losses(imgs)
        self.opt_vq.zero_grad()
        vq_loss.backward(retain_graph=True)
        self.opt_disc.zero_grad()
        gan_loss.backward()  # missed: ADL024 (the discriminator loss also reaches the VQ parameters before opt_vq.step())
        self.opt_vq.step()
        self.opt_disc.step()
        return vq_loss, gan_loss


def bug_shows():
    """The VQ model's gradient at the step differs from the gradient of the VQ loss alone."""
    torch.manual_seed(0)
    trainer = VQGANTrainer(TinyVQGAN())
    imgs = torch.rand(2, 3, 8, 8)
    vq_loss, _ = trainer.losses(imgs)
    wanted = torch.autograd.grad(vq_loss, list(trainer.vqgan.decoder.parameters()))
    trainer.opt_vq.step = lambda: None
    trainer.opt_disc.step = lambda: None
    trainer.step(imgs)
    applied = [p.grad for p in trainer.vqgan.decoder.parameters()]
    return any(not torch.allclose(a, w) for a, w in zip(applied, wanted))


if __name__ == "__main__":
    assert bug_shows()
    print("bug shows: the VQ step applies the discriminator loss's gradient too")
