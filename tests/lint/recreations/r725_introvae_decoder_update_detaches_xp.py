"""IntroVAE (introspective VAE), issue 3 ("a mistake has been found"): in `model.py` the decoder
update computes the adversarial term of the generated samples from `self.encoder(xp.detach())`;
`xp` is the decoder's own output, so the detach stops the gradient the decoder should receive from
that term -- the decoder is never trained to fool the encoder on generated samples (Eq. 12 of the
paper).  Nothing raises; the decoder quietly learns from the reconstruction branch only.
Re-created in my own words with the repository's structure: one `IntroVAE` module owning the
encoder, the decoder, the reparametrisation heads and both optimizers, whose `forward` does the
encoder update and then the decoder update and returns the losses, and the `main` loop calling it.
`bug_shows()` records the gradient reaching each decoder output: the generated batch of the
decoder update gets none.
Buggy line: `zpp_ = self.encoder(xp.detach())` in the decoder update.
Source: https://github.com/dragen1860/IntroVAE-Pytorch/issues/3"""
from argparse import Namespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class IntroVAE(nn.Module):
    def __init__(self, args):
        super(IntroVAE, self).__init__()
        z_dim = args.z_dim
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2 * z_dim))
        self.decoder = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, 16))
        self.mu_net = nn.Linear(2 * z_dim, z_dim)
        self.log_sigma2_net = nn.Linear(2 * z_dim, z_dim)
        self.alpha, self.beta, self.gamma = args.alpha, args.beta, args.gamma
        self.margin = args.margin
        self.optim_encoder = torch.optim.Adam(list(self.encoder.parameters()) + list(self.mu_net.parameters())
                                              + list(self.log_sigma2_net.parameters()), lr=args.lr)
        self.optim_decoder = torch.optim.Adam(self.decoder.parameters(), lr=args.lr)

    def set_alph_beta_gamma(self, alpha, beta, gamma):
        self.alpha, self.beta, self.gamma = alpha, beta, gamma

    def reparametrization(self, z_):
        mu, log_sigma2 = self.mu_net(z_), self.log_sigma2_net(z_)
        eps = torch.randn_like(log_sigma2)
        z = mu + torch.exp(log_sigma2).sqrt() * eps
        return z, mu, log_sigma2

    def kld(self, mu, log_sigma2):
        return (-0.5 * (1 + log_sigma2 - torch.pow(mu, 2) - torch.exp(log_sigma2))).sum()

    def output_activation(self, x):
        return torch.tanh(x)

    def forward(self, x):
        # 1. update encoder
        z_ = self.encoder(x)
        z, mu, log_sigma2 = self.reparametrization(z_)
        xr = self.output_activation(self.decoder(z))
        zp = torch.randn_like(z)
        xp = self.output_activation(self.decoder(zp))
        loss_ae = F.mse_loss(xr, x)
        reg_ae = self.kld(mu, log_sigma2)
        _, mur_ng, log_sigma2r_ng = self.reparametrization(self.encoder(xr.detach()))
        regr_ng = torch.clamp(self.margin - self.kld(mur_ng, log_sigma2r_ng), min=0)
        _, mupp_ng, log_sigma2pp_ng = self.reparametrization(self.encoder(xp.detach()))
        regpp_ng = torch.clamp(self.margin - self.kld(mupp_ng, log_sigma2pp_ng), min=0)
        encoder_adv = regr_ng + regpp_ng
        encoder_loss = self.gamma * reg_ae + self.alpha * encoder_adv + self.beta * loss_ae
        self.optim_encoder.zero_grad()
        encoder_loss.backward()
        self.optim_encoder.step()

        # 2. update decoder
        z_ = self.encoder(x)
        z, mu, log_sigma2 = self.reparametrization(z_)
        xr = self.output_activation(self.decoder(z))
        zp = torch.randn_like(z)
        xp = self.output_activation(self.decoder(zp))
        loss_ae = F.mse_loss(xr, x)
        zr_ = self.encoder(xr)
        _, mur, log_sigma2r = self.reparametrization(zr_)
        regr = self.kld(mur, log_sigma2r)
        zpp_ = self.encoder(xp.detach())  # missed: no rule, a detach that cuts the gradient the optimizer's own module should receive (`self.encoder(xp.detach())` where `xp` is the decoder's output in the decoder update)
        _, mupp, log_sigma2pp = self.reparametrization(zpp_)
        regpp = self.kld(mupp, log_sigma2pp)
        decoder_adv = regr + regpp
        decoder_loss = self.alpha * decoder_adv + self.beta * loss_ae
        self.optim_decoder.zero_grad()
        decoder_loss.backward()
        self.optim_decoder.step()
        return encoder_loss, decoder_loss, reg_ae, encoder_adv, decoder_adv, loss_ae, xr, xp


def main(args, batches, vae=None):
    torch.manual_seed(22)
    vae = vae if vae is not None else IntroVAE(args)
    vae.set_alph_beta_gamma(args.alpha, args.beta, args.gamma)
    for x in batches:
        encoder_loss, decoder_loss, reg_ae, encoder_adv, decoder_adv, loss_ae, xr, xp = vae(x)
    return vae


ARGS = Namespace(z_dim=4, alpha=0.25, beta=0.5, gamma=1.0, margin=110, lr=2e-3)


def run():
    torch.manual_seed(0)
    return main(ARGS, [torch.randn(4, 16) for _ in range(2)])


def bug_shows():
    torch.manual_seed(0)
    vae = IntroVAE(ARGS)
    reached = []

    def record(module, inputs, output):
        slot = len(reached)
        reached.append(False)
        output.register_hook(lambda grad: reached.__setitem__(slot, True))

    vae.decoder.register_forward_hook(record)
    main(ARGS, [torch.randn(4, 16)], vae)
    # calls: encoder update (xr, xp), decoder update (xr, xp); the decoder update's xp gets nothing
    return reached[2] and not reached[3]
