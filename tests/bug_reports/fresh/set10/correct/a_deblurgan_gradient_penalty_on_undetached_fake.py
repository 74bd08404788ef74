"""DeblurGAN trained with the WGAN-GP critic (KupynOrest/DeblurGAN's models/losses.py and
conditional_gan_model.py): the generator runs once per batch, then the critic is updated 5 times on
that output. The critic's fake term uses `fakeB.detach()`, but the gradient penalty is computed on
interpolates between the real image and the un-detached `fakeB`, so each critic loss reaches back
into the generator's graph. The first critic `loss_D.backward()` frees that graph and the second
one raises "Trying to backward through the graph a second time" (with the other discriminators,
which have no penalty, training went well).
Source: https://github.com/KupynOrest/DeblurGAN/issues/56 ("Backward twice when using wgan-gp as
critic": `self.loss_D.backward()` in `backward_D` raises; fixed in the repository by computing the
penalty on `realB.data, fakeB.data`).
expect: raises"""
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
netD = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                     nn.Conv2d(8, 1, 3, stride=2, padding=1))
optimizer_G = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.999))
LAMBDA, critic_updates, lambda_content = 10, 5, 100


def calc_gradient_penalty(netD, real_data, fake_data):
    alpha = torch.rand(1, 1).expand(real_data.size(0), real_data[0].numel()).reshape(real_data.size())
    interpolates = (alpha * real_data + (1 - alpha) * fake_data).requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


def critic_loss(real_B, fake_B):
    D_fake = netD(fake_B.detach()).mean()
    D_real = netD(real_B).mean()
    return D_fake - D_real + calc_gradient_penalty(netD, real_B, fake_B.detach())


losses = []
for step in range(2):
    real_A, real_B = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
    fake_B = netG(real_A)
    for iter_d in range(critic_updates):
        optimizer_D.zero_grad()
        loss_D = critic_loss(real_B, fake_B)
        loss_D.backward()
        optimizer_D.step()
    optimizer_G.zero_grad()
    loss_G = -netD(fake_B).mean() + F.l1_loss(fake_B, real_B) * lambda_content
    loss_G.backward()
    optimizer_G.step()
    losses.append((loss_D.detach(), loss_G.detach()))

result = {"losses": losses, "G": [p.detach().clone() for p in netG.parameters()],
          "D": [p.detach().clone() for p in netD.parameters()]}
