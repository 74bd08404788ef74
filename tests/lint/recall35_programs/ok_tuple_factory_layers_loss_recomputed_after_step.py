"""The near twin of bad_tuple_factory_layers_step_before_backward: the reconstruction loss
is computed again after the encoder's step, from a new pass through the stepped encoder."""
import torch
import torch.nn as nn


def build_autoencoder(width, latent):
    encoder = nn.Sequential(nn.Linear(width, 16), nn.Tanh(), nn.Linear(16, latent))
    decoder = nn.Sequential(nn.Linear(latent, 16), nn.Tanh(), nn.Linear(16, width))
    return encoder, decoder


class AutoEncoderModel:
    def __init__(self, width=6, latent=2):
        self.encoder, self.decoder = build_autoencoder(width, latent)
        self.enc_optim = torch.optim.SGD(self.encoder.parameters(), lr=0.1)
        self.dec_optim = torch.optim.SGD(self.decoder.parameters(), lr=0.1)

    def losses(self, x):
        z = self.encoder(x)
        latent_loss = z.pow(2).mean()
        reconstruction_loss = (self.decoder(z) - x).pow(2).mean()
        return latent_loss, reconstruction_loss

    def optimize(self, x):
        latent_loss, reconstruction_loss = self.losses(x)
        self.enc_optim.zero_grad()
        latent_loss.backward(retain_graph=True)
        self.enc_optim.step()
        self.dec_optim.zero_grad()
        reconstruction_loss = self.losses(x)[1]
        reconstruction_loss.backward()
        self.dec_optim.step()


def run():
    torch.manual_seed(0)
    model = AutoEncoderModel()
    for _ in range(2):
        model.optimize(torch.randn(5, 6))
