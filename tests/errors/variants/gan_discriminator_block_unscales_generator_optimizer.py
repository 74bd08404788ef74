# message: unscale_() has already been called on this optimizer since the last update().
# code: AD148 (catalogue: amp_unscale_every_micro_batch)
# set: 28
# trigger: a GAN trained with one GradScaler and two optimizers (update() once per iteration, as the
#   AMP recipe for several optimizers says); the discriminator's block was copied from the generator's
#   and still unscales the generator's optimizer before clipping, so the generator's own unscale_()
#   later in the iteration is the second one
# source: none found; the pattern as users write it (copy-pasted optimizer blocks of a GAN step)
# results: d_losses, g_losses, generator, discriminator
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
opt_g = torch.optim.SGD(generator.parameters(), lr=0.1)
opt_d = torch.optim.SGD(discriminator.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)
bce = nn.BCEWithLogitsLoss()
d_losses, g_losses = [], []
for _ in range(3):
    real, noise = torch.randn(6, 3), torch.randn(6, 2)
    fake = generator(noise)

    opt_d.zero_grad()
    d_loss = bce(discriminator(real), torch.ones(6, 1)) + bce(discriminator(fake.detach()), torch.zeros(6, 1))
    scaler.scale(d_loss).backward()
    scaler.unscale_(opt_g)  # PRIMARY
    torch.nn.utils.clip_grad_norm_(discriminator.parameters(), 1.0)
    scaler.step(opt_d)

    opt_g.zero_grad()
    g_loss = bce(discriminator(fake), torch.ones(6, 1))
    scaler.scale(g_loss).backward()
    scaler.unscale_(opt_g)
    torch.nn.utils.clip_grad_norm_(generator.parameters(), 1.0)
    scaler.step(opt_g)

    scaler.update()
    d_losses.append(d_loss.item())
    g_losses.append(g_loss.item())
