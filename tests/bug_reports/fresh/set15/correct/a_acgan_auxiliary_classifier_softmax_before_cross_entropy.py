"""Auxiliary-classifier GAN in PyTorch Lightning (nocotan/pytorch-lightning-gans, models/acgan.py):
the discriminator's class head ended in `nn.Softmax()` and its output went to `F.cross_entropy`,
which applies log-softmax itself. The loss is then the cross-entropy of softmax(probabilities):
bounded, nearly flat, and its gradients are a small fraction of the intended ones, so the class
conditioning barely trains in either network. Nothing is raised.
Source: https://github.com/nocotan/pytorch-lightning-gans/issues/9 ("you apply a Softmax before
doing F.cross_entropy ... this function already applies a Softmax by itself"; the maintainer: "I
agree with you and I think this is a bug", fixed in commit 46272a4 by dropping the Softmax).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

LATENT, CLASSES, IMAGE, FEATURES, BATCH = 8, 4, 12, 16, 6


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label_emb = nn.Embedding(CLASSES, LATENT)
        self.net = nn.Sequential(nn.Linear(LATENT, 32), nn.ReLU(), nn.Linear(32, IMAGE), nn.Tanh())

    def forward(self, z, labels):
        return self.net(self.label_emb(labels) * z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(IMAGE, FEATURES), nn.LeakyReLU(0.2))
        self.adv_layer = nn.Sequential(nn.Linear(FEATURES, 1), nn.Sigmoid())
        self.aux_layer = nn.Sequential(nn.Linear(FEATURES, CLASSES))

    def forward(self, img):
        out = self.model(img)
        return self.adv_layer(out), self.aux_layer(out)


def adversarial_loss(y_hat, y):
    return F.binary_cross_entropy(y_hat, y)


def auxiliary_loss(y_hat, y):
    return F.cross_entropy(y_hat, y)


generator, discriminator = Generator(), Discriminator()
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
real_imgs = torch.randn(BATCH, IMAGE)
labels = torch.randint(0, CLASSES, (BATCH,))
valid, fake = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)

losses = []
for step in range(3):
    z = torch.randn(BATCH, LATENT)
    gen_labels = torch.randint(0, CLASSES, (BATCH,))
    # generator step (optimizer_idx 0)
    opt_g.zero_grad()
    validity, pred_label = discriminator(generator(z, gen_labels))
    g_loss = 0.5 * adversarial_loss(validity, valid) + auxiliary_loss(pred_label, gen_labels)
    g_loss.backward()
    opt_g.step()
    # discriminator step (optimizer_idx 1)
    opt_d.zero_grad()
    validity, pred_label = discriminator(real_imgs)
    real_loss = 0.5 * adversarial_loss(validity, valid) + auxiliary_loss(pred_label, labels)
    fake_validity, fake_pred_label = discriminator(generator(z, gen_labels).detach())
    fake_loss = 0.5 * adversarial_loss(fake_validity, fake) + auxiliary_loss(fake_pred_label, gen_labels)
    d_loss = (real_loss + fake_loss) / 2
    d_loss.backward()
    opt_d.step()
    losses.append(torch.stack([g_loss.detach(), d_loss.detach()]))

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in [*generator.parameters(), *discriminator.parameters()]]}
