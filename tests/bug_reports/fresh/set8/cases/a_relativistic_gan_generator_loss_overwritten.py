"""Relativistic GAN (PyTorch-GAN's relativistic_gan.py): the generator's relativistic loss, which
compares the discriminator's score of the fakes with its (detached) score of the real images, is
computed and then overwritten by the plain non-saturating loss `adversarial_loss(discriminator(
gen_imgs), valid)`; the generator is trained as a standard GAN while the discriminator is trained
relativistically (no error: the relativistic term's graph is built and dropped).
Source: https://github.com/eriklindernoren/PyTorch-GAN/issues/52 ("Possible error of relativistic
gan": "Does it look like `g_loss` is getting overwritten?"; answer: discard the line
`g_loss = adversarial_loss(discriminator(gen_imgs), valid)`).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
LATENT, IMG = 4, 10
rel_avg_gan = True
adversarial_loss = nn.BCEWithLogitsLoss()
generator = nn.Sequential(nn.Linear(LATENT, 16), nn.ReLU(), nn.Linear(16, IMG), nn.Tanh())
discriminator = nn.Sequential(nn.Linear(IMG, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
data = torch.rand(24, IMG) * 2 - 1
g_losses, d_losses = [], []
for i in range(3):
    real_imgs = data[8 * i:8 * (i + 1)]
    valid = torch.ones(real_imgs.shape[0], 1)
    fake = torch.zeros(real_imgs.shape[0], 1)

    #  Train Generator
    optimizer_G.zero_grad()
    z = torch.randn(real_imgs.shape[0], LATENT)
    gen_imgs = generator(z)
    real_pred = discriminator(real_imgs).detach()
    fake_pred = discriminator(gen_imgs)
    if rel_avg_gan:
        g_loss = adversarial_loss(fake_pred - real_pred.mean(0, keepdim=True), valid)
    else:
        g_loss = adversarial_loss(fake_pred - real_pred, valid)
    # Loss measures generator's ability to fool the discriminator
    g_loss = adversarial_loss(discriminator(gen_imgs), valid)
    g_loss.backward()
    optimizer_G.step()

    #  Train Discriminator
    optimizer_D.zero_grad()
    real_pred = discriminator(real_imgs)
    fake_pred = discriminator(gen_imgs.detach())
    if rel_avg_gan:
        real_loss = adversarial_loss(real_pred - fake_pred.mean(0, keepdim=True), valid)
        fake_loss = adversarial_loss(fake_pred - real_pred.mean(0, keepdim=True), fake)
    else:
        real_loss = adversarial_loss(real_pred - fake_pred, valid)
        fake_loss = adversarial_loss(fake_pred - real_pred, fake)
    d_loss = (real_loss + fake_loss) / 2
    d_loss.backward()
    optimizer_D.step()
    g_losses.append(g_loss.detach())
    d_losses.append(d_loss.detach())
result = {"g_losses": g_losses, "d_losses": d_losses,
          "G": [p.detach().clone() for p in generator.parameters()],
          "D": [p.detach().clone() for p in discriminator.parameters()]}
