"""Deblurring GAN with a global and a patch discriminator (DeblurGANv2-MobileNetv123-PyTorch's
trainer.py, `Continue_train_WGAN`): each iteration clears the discriminators' gradients and calls
`loss_D.backward()`, but neither `optimizer_D1.step()` nor `optimizer_D2.step()` is ever called, so
both discriminators keep their initial weights and the generator's adversarial loss is measured
against untrained critics (no error).
Source: https://github.com/zhaoyuzhi/DeblurGANv2-MobileNetv123-PyTorch/issues/7 ("discriminators
are not updated in the Continue_train_WGAN function in trainer.py": "there is no call to
optimizer_D1.step() or optimizer_D2.step()"; the author: "Just checked. I thought it is a bug").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

generator = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))
global_discriminator = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                     nn.Flatten(), nn.Linear(8 * 8 * 8, 1))
patch_discriminator = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                    nn.Conv2d(8, 1, 3, padding=1))
optimizer_G = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
optimizer_D1 = torch.optim.Adam(global_discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))
optimizer_D2 = torch.optim.Adam(patch_discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))
lambda_gan = 0.01

sharp = torch.rand(6, 3, 16, 16)
blurred = F.avg_pool2d(F.pad(sharp, (1, 1, 1, 1), mode="replicate"), 3, stride=1)
losses = []
for i in range(4):
    true_input, true_target = blurred, sharp
    fake_target = generator(true_input)

    # Train the discriminators (WGAN losses)
    optimizer_D1.zero_grad()
    optimizer_D2.zero_grad()
    loss_D1 = (-torch.mean(global_discriminator(true_target))
               + torch.mean(global_discriminator(fake_target.detach())))
    loss_D2 = (-torch.mean(patch_discriminator(true_target))
               + torch.mean(patch_discriminator(fake_target.detach())))
    loss_D = 0.5 * (loss_D1 + loss_D2)
    loss_D.backward()

    # Train the generator
    optimizer_G.zero_grad()
    Pixellevel_L1_Loss = F.l1_loss(fake_target, true_target)
    GAN_Loss = -0.5 * (torch.mean(global_discriminator(fake_target))
                       + torch.mean(patch_discriminator(fake_target)))
    loss = Pixellevel_L1_Loss + lambda_gan * GAN_Loss
    loss.backward()
    optimizer_G.step()
    losses.append(torch.stack([loss_D.detach(), loss.detach()]))
result = {"losses": losses,
          "params": [p.detach().clone() for m in (generator, global_discriminator, patch_discriminator)
                     for p in m.parameters()]}
