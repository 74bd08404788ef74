"""ACTIVA (an introspective VAE generating single-cell expression profiles): in the encoder's
update the reconstructions and the generated samples are re-encoded without `.detach()`,
`rec_mu, rec_logvar = model.encode(rec)` and `fake_mu, fake_logvar = model.encode(fake)`. The
encoder's adversarial hinge terms, which push the KL of `rec` and `fake` UP, then also flow into
the decoder; the decoder's gradients are cleared before the encoder's backward and not again before
the generator's step (the generator's own KL terms re-encode detached samples, as in the
repository's file), so the decoder is stepped on the reconstruction loss plus the encoder's
adversarial objective: it is trained partly to make its own samples look fake. Nothing is
raised and the losses look plausible.
Source: https://github.com/SindiLab/ACTIVA/issues/2 ("It looks a bug in L376-377 in ACTIVA.py,
which should be rec_mu, rec_logvar = model.encode(rec.detach()); fake_mu, fake_logvar =
model.encode(fake.detach())"; the author: "You are absolutely correct!").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class IntroVAE(nn.Module):
    def __init__(self, n_genes=32, zdim=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_genes, 16), nn.ReLU(), nn.Linear(16, 2 * zdim))
        self.decoder = nn.Sequential(nn.Linear(zdim, 16), nn.ReLU(), nn.Linear(16, n_genes))

    def encode(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        return mu, logvar

    def sample(self, z):
        return self.decoder(z)

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return mu, logvar, z, self.decoder(z)

    def kl_loss(self, mu, logvar):
        return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)

    def reconstruction_loss(self, prediction, target):
        return F.mse_loss(prediction, target, reduction="sum") / target.size(0)


model = IntroVAE()
optimizerE = torch.optim.Adam(model.encoder.parameters(), lr=2e-3)
optimizerG = torch.optim.Adam(model.decoder.parameters(), lr=2e-3)
m_plus, weight_neg, alpha_1, alpha_2 = 40.0, 0.5, 1.0, 1.0
data = torch.rand(16, 32)
losses = []
for step in range(4):
    noise = torch.randn(16, 4)
    real = data
    # ---------- Update E ----------
    fake = model.sample(noise)
    real_mu, real_logvar, z, rec = model(real)
    rec_mu, rec_logvar = model.encode(rec)
    fake_mu, fake_logvar = model.encode(fake)
    loss_rec = model.reconstruction_loss(rec, real)
    lossE_real_kl = model.kl_loss(real_mu, real_logvar).mean()
    lossE_rec_kl = model.kl_loss(rec_mu, rec_logvar).mean()
    lossE_fake_kl = model.kl_loss(fake_mu, fake_logvar).mean()
    loss_margin = lossE_real_kl + (F.relu(m_plus - lossE_rec_kl) + F.relu(m_plus - lossE_fake_kl)) * 0.5 * weight_neg
    lossE = alpha_1 * loss_margin + alpha_2 * loss_rec
    optimizerG.zero_grad()
    optimizerE.zero_grad()
    lossE.backward(retain_graph=True)
    optimizerE.step()
    # ---------- Update G ----------
    rec_mu, rec_logvar = model.encode(rec.detach())
    fake_mu, fake_logvar = model.encode(fake.detach())
    lossG_rec_kl = model.kl_loss(rec_mu, rec_logvar).mean()
    lossG_fake_kl = model.kl_loss(fake_mu, fake_logvar).mean()
    lossG = alpha_1 * 0.5 * (lossG_rec_kl + lossG_fake_kl)
    lossG.backward()
    optimizerG.step()
    losses.append(torch.stack([lossE.detach(), lossG.detach()]))
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
