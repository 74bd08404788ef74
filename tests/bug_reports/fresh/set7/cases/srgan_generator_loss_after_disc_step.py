"""Super-resolution GAN (SRGAN) training step: the discriminator's loss is backpropagated with
`retain_graph=True` and `optimizerD.step()` updates it in place; the generator's loss then reuses
`fake_out`, the discriminator's output computed before that step, whose graph saved the old
weights, so `g_loss.backward()` fails.
Source: https://github.com/leftthomas/SRGAN/issues/79 ("one of the variables needed for gradient
computation has been modified by an inplace operation" at `g_loss.backward()` with PyTorch 1.6;
the reporter's fix, confirmed in the thread: compute `fake_img` and `fake_out` again before
`g_loss`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
netG = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                     nn.Conv2d(8, 3, 3, padding=1))
netD = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten(),
                     nn.Linear(8 * 8 * 8, 1), nn.Sigmoid())
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-3)


def generator_criterion(out_labels, out_images, target_images):
    adversarial_loss = torch.mean(1 - out_labels)
    image_loss = F.mse_loss(out_images, target_images)
    return image_loss + 0.001 * adversarial_loss


g_losses, d_losses = [], []
for step in range(3):
    real_img = torch.rand(4, 3, 16, 16)
    z = F.avg_pool2d(real_img, 2)
    fake_img = netG(z)
    netD.zero_grad()
    real_out = netD(real_img).mean()
    fake_out = netD(fake_img).mean()
    d_loss = 1 - real_out + fake_out
    d_loss.backward(retain_graph=True)
    optimizerD.step()
    netG.zero_grad()
    g_loss = generator_criterion(fake_out, fake_img, real_img)
    g_loss.backward()
    optimizerG.step()
    g_losses.append(g_loss.detach())
    d_losses.append(d_loss.detach())
result = {"g_losses": g_losses, "d_losses": d_losses,
          "G": [p.detach().clone() for p in netG.parameters()], "D": [p.detach().clone() for p in netD.parameters()]}
