"""pix2pix-turbo's paired image-to-image training loop (img2img-turbo's train_pix2pix_turbo.py):
the generator's adversarial step calls `lossG = net_disc(x_tgt_pred, for_G=True).mean()` and
`accelerator.backward(lossG)` with the discriminator's parameters still requiring grad, then
clears only the generator's optimizer (`optimizer.zero_grad()`). The gradients that the
generator's loss left on the discriminator are still there when the discriminator's real-image
loss is backpropagated, so `optimizer_disc.step()` also follows the generator's objective, pushing
the discriminator to call the generated image real (no error, no warning).
Source: https://github.com/GaParmar/img2img-turbo/issues/56 ("When training the generator, the
discriminator's 'requires_grad' is True ... will produce gradients for the discriminator. The
gradients will update to the discriminator's parameter"; "I think that is the case for
train_pix2pix_turbo.py. Gradients for the discriminator will be produced ... And, the gradients
won't be deleted until ..."). The unpaired CycleGAN script of the same repository clears the
discriminator's optimizer right after the generator's step; the correct version does that here.
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    """A patch discriminator that returns its own loss, like the vision-aided discriminator."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 4, stride=2, padding=1))

    def forward(self, x, for_G=False, for_real=False):
        logits = self.net(x)
        if for_G or for_real:
            return F.softplus(-logits)
        return F.softplus(logits)


net_pix2pix, net_disc = Generator(), Discriminator()
optimizer = torch.optim.AdamW(net_pix2pix.parameters(), lr=1e-3)
optimizer_disc = torch.optim.AdamW(net_disc.parameters(), lr=1e-3)

x_src = torch.rand(2, 3, 8, 8) * 2 - 1
x_tgt = torch.rand(2, 3, 8, 8) * 2 - 1

history = []
for step in range(3):
    # Reconstruction loss
    x_tgt_pred = net_pix2pix(x_src)
    loss = F.mse_loss(x_tgt_pred, x_tgt)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

    # Generator loss: fool the discriminator
    x_tgt_pred = net_pix2pix(x_src)
    lossG = net_disc(x_tgt_pred, for_G=True).mean()
    lossG.backward()
    optimizer.step()
    optimizer.zero_grad()
    optimizer_disc.zero_grad()

    # Discriminator loss: real image, then fake image
    lossD_real = net_disc(x_tgt.detach(), for_real=True).mean()
    lossD_real.backward()
    optimizer_disc.step()
    optimizer_disc.zero_grad()
    lossD_fake = net_disc(x_tgt_pred.detach(), for_real=False).mean()
    lossD_fake.backward()
    optimizer_disc.step()
    optimizer_disc.zero_grad()
    history.append((loss.detach(), lossG.detach(), lossD_real.detach(), lossD_fake.detach()))

result = {"losses": history, "generator": [p.detach().clone() for p in net_pix2pix.parameters()],
          "discriminator": [p.detach().clone() for p in net_disc.parameters()]}
