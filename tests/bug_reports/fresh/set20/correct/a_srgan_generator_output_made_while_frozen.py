"""SRGAN adversarial training (Lornatang/SRGAN-PyTorch, train.py before the fix): each phase
switches requires_grad of both networks. The discriminator phase freezes the generator and, in that
phase, makes the super-resolved image `sr = generator(lr)` for the fake sample; the generator phase
unfreezes the generator but reuses that same `sr`, made while the generator was frozen and the
discriminator is now frozen too, so the generator's loss has no graph and `g_loss.backward()` stops
with "element 0 of tensors does not require grad and does not have a grad_fn".
Source: https://github.com/Lornatang/SRGAN-PyTorch/issues/37 ("Runtime error in training"; the answer:
gradients are disabled while the generator makes the super-resolution image; the maintainer's fix,
commit 531beb5, drops the requires_grad switching: the discriminator sees `sr.detach()` and the
generator's loss uses the same `sr` with its graph).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

generator = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU(), nn.Conv2d(8, 12, 3, padding=1),
                          nn.PixelShuffle(2))
discriminator = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten(),
                              nn.Linear(8 * 4 * 4, 1))
feature_extractor = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU()).requires_grad_(False)
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
adversarial_criterion = nn.BCEWithLogitsLoss()


def perceptual_criterion(sr, hr):
    return F.mse_loss(feature_extractor(sr), feature_extractor(hr))


d_losses, g_losses = [], []
for step in range(3):
    hr = torch.rand(4, 3, 8, 8)
    lr = F.avg_pool2d(hr, 2)
    real_label = torch.ones(4, 1)
    fake_label = torch.zeros(4, 1)

    # (1) Update D.
    discriminator.zero_grad()
    d_loss_hr = adversarial_criterion(discriminator(hr), real_label)
    d_loss_hr.backward()
    sr = generator(lr)
    d_loss_sr = adversarial_criterion(discriminator(sr.detach()), fake_label)
    d_loss_sr.backward()
    d_optimizer.step()

    # (2) Update G.
    generator.zero_grad()
    sr_output = discriminator(sr)
    g_loss = perceptual_criterion(sr, hr) + 1e-3 * adversarial_criterion(sr_output, real_label)
    g_loss.backward()
    g_optimizer.step()
    d_losses.append((d_loss_hr + d_loss_sr).detach())
    g_losses.append(g_loss.detach())

result = {"d_losses": torch.stack(d_losses), "g_losses": torch.stack(g_losses),
          "generator": [p.detach().clone() for p in generator.parameters()],
          "discriminator": [p.detach().clone() for p in discriminator.parameters()]}
