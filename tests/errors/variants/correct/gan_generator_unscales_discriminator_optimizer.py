# message: unscale_() is being called after step().
# code: AD149 (catalogue: amp_unscale_after_step)
# set: 5
# trigger: a GAN trained with one GradScaler: the generator's half of the step, copied from the
#   discriminator's, still unscales the discriminator's optimizer (already stepped) before
#   clipping the generator
# source: none found; the pattern as users write it
# results: losses, generator, discriminator
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
generator = nn.Linear(2, 3)
discriminator = nn.Linear(3, 1)
opt_g = torch.optim.SGD(generator.parameters(), lr=0.05)
opt_d = torch.optim.SGD(discriminator.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
real = torch.randn(4, 3) + 1.0
losses = []
for _ in range(2):
    noise = torch.randn(4, 2)
    fake = generator(noise)
    opt_d.zero_grad()
    d_loss = (F.binary_cross_entropy_with_logits(discriminator(real), torch.ones(4, 1))
              + F.binary_cross_entropy_with_logits(discriminator(fake.detach()), torch.zeros(4, 1)))
    scaler.scale(d_loss).backward()
    scaler.unscale_(opt_d)
    torch.nn.utils.clip_grad_norm_(discriminator.parameters(), 1.0)
    scaler.step(opt_d)

    opt_g.zero_grad()
    g_loss = F.binary_cross_entropy_with_logits(discriminator(fake), torch.ones(4, 1))
    scaler.scale(g_loss).backward()
    scaler.unscale_(opt_g)  # PRIMARY
    torch.nn.utils.clip_grad_norm_(generator.parameters(), 1.0)
    scaler.step(opt_g)
    scaler.update()
    losses.append((d_loss.item(), g_loss.item()))
