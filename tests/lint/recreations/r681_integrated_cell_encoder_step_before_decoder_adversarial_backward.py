"""Integrated Cell (AllenCellModeling/pytorch_integrated_cell), issue 95: training the
conditional beta-VAE-GAN (`cbvaegan2D_target.sh`) fails in `Model.iteration` at
`minimaxDecDLoss.mul(self.lambda_decD_loss).backward()` with "one of the variables needed for
gradient computation has been modified by an inplace operation".  After the decoder
discriminator `decD` is trained, the iteration encodes the batch, decodes it, backpropagates
the beta-VAE loss with `retain_graph=True` and steps the encoder's optimizer `opt_enc`; then
it scores the reconstruction `xHat` (decoded from the encoder's `z`) with `decD` and
backpropagates the decoder's adversarial loss through the same forward, through the encoder
that the step has just changed (freezing the encoder's `requires_grad` after the step does not
remove it from the graph already built).
Re-created with the model class's `iteration` (the discriminator phase, the autoencoder phase,
the adversarial phase), its base class's reparameterisation and KL helpers, and small
conditional encoder / decoder / discriminator networks on random cells.
Buggy line: `opt_enc.step()` before `minimaxDecDLoss.mul(...).backward()`.
Source: https://github.com/AllenCellModeling/pytorch_integrated_cell/issues/95"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Enc(nn.Module):
    def __init__(self, x_dim=16, ref_dim=8, n_classes=3, n_latent=4):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(x_dim + ref_dim + n_classes, 32), nn.ReLU(),
                                  nn.Linear(32, 32), nn.ReLU())
        self.mu = nn.Linear(32, n_latent)
        self.logsigma = nn.Linear(32, n_latent)

    def forward(self, x, ref, classes_onehot):
        h = self.main(torch.cat([x, ref, classes_onehot], 1))
        return self.mu(h), self.logsigma(h)


class Dec(nn.Module):
    def __init__(self, x_dim=16, ref_dim=8, n_classes=3, n_latent=4):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(n_latent + ref_dim + n_classes, 32), nn.ReLU(),
                                  nn.Linear(32, x_dim), nn.Sigmoid())

    def forward(self, z, ref, classes_onehot):
        return self.main(torch.cat([z, ref, classes_onehot], 1))


class DecD(nn.Module):
    """Outputs the classes plus one 'fake' class."""

    def __init__(self, x_dim=16, ref_dim=8, n_classes=3):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(x_dim + ref_dim, 32), nn.LeakyReLU(0.2),
                                  nn.Linear(32, n_classes + 1))

    def forward(self, x, ref, classes_onehot=None):
        return self.main(torch.cat([x, ref], 1))


class DataProvider:
    def __init__(self, n_classes=3, batch_size=6):
        self.n_classes = n_classes
        self.batch_size = batch_size

    def get_n_classes(self):
        return self.n_classes

    def get_sample(self):
        x = torch.rand(self.batch_size, 16)
        classes = torch.randint(0, self.n_classes, (self.batch_size,))
        ref = torch.rand(self.batch_size, 8)
        return x, classes, ref


def index_to_onehot(index, n_classes):
    return F.one_hot(index, n_classes).float()


class CBVAEModel:
    """The conditional beta-VAE base: reparameterisation and losses."""

    def __init__(self, enc, dec, opt_enc, opt_dec, crit_recon, data_provider, beta=1):
        self.enc, self.dec = enc, dec
        self.opt_enc, self.opt_dec = opt_enc, opt_dec
        self.crit_recon = crit_recon
        self.data_provider = data_provider
        self.beta = beta

    def reparameterize(self, mu, log_var):
        std = torch.exp(0.5 * log_var)
        eps = torch.randn_like(std)
        return mu + eps * std

    def kld_loss(self, mu, logsigma):
        return -0.5 * torch.mean(1 + logsigma - mu.pow(2) - logsigma.exp())

    def vae_loss(self, recon_loss, kld_loss):
        return recon_loss + self.beta * kld_loss


class Model(CBVAEModel):
    def __init__(self, decD, opt_decD, crit_decD, lambda_decD_loss=1, n_decD_steps=1, **kwargs):
        super().__init__(**kwargs)
        self.decD = decD
        self.opt_decD = opt_decD
        self.crit_decD = crit_decD
        self.lambda_decD_loss = lambda_decD_loss
        self.n_decD_steps = n_decD_steps

    def iteration(self):
        enc, dec, decD = self.enc, self.dec, self.decD
        opt_enc, opt_dec, opt_decD = self.opt_enc, self.opt_dec, self.opt_decD
        crit_recon, crit_decD = self.crit_recon, self.crit_decD

        enc.train(True)
        dec.train(True)
        decD.train(True)

        for p in decD.parameters():
            p.requires_grad = True
        for p in enc.parameters():
            p.requires_grad = False
        for p in dec.parameters():
            p.requires_grad = False

        decDLoss = 0
        for step_num in range(self.n_decD_steps):
            x, classes, ref = self.data_provider.get_sample()
            classes_onehot = index_to_onehot(classes, self.data_provider.get_n_classes())
            y_xReal = classes
            y_xFake = torch.full(classes.shape, self.data_provider.get_n_classes(), dtype=torch.long)

            with torch.no_grad():
                mu, logsigma = enc(x, ref, classes_onehot)
                z = self.reparameterize(mu, logsigma)
                xHat = dec(z, ref, classes_onehot)

            opt_enc.zero_grad()
            opt_dec.zero_grad()
            opt_decD.zero_grad()

            yHat_xReal = decD(x, ref, classes_onehot)
            errDecD_real = crit_decD(yHat_xReal, y_xReal)
            yHat_xFake = decD(xHat, ref)
            errDecD_fake = crit_decD(yHat_xFake, y_xFake)

            decDLoss_tmp = (errDecD_real + errDecD_fake) / 2
            decDLoss_tmp.backward()
            opt_decD.step()
            decDLoss += decDLoss_tmp.item()

        for p in enc.parameters():
            p.requires_grad = True
        for p in dec.parameters():
            p.requires_grad = True
        for p in decD.parameters():
            p.requires_grad = False

        opt_enc.zero_grad()
        opt_dec.zero_grad()
        opt_decD.zero_grad()

        # train autoencoder
        mu, logsigma = enc(x, ref, classes_onehot)
        z = self.reparameterize(mu, logsigma)
        kld_loss = self.kld_loss(mu, logsigma)
        xHat = dec(z, ref, classes_onehot)

        recon_loss = crit_recon(xHat, x)
        beta_vae_loss = self.vae_loss(recon_loss, kld_loss)
        beta_vae_loss.backward(retain_graph=True)

        recon_loss = recon_loss.item()
        kld_loss = kld_loss.item()
        zLatent = mu.detach().cpu()

        opt_enc.step()  # expect: ADL003

        if self.lambda_decD_loss > 0:
            for p in enc.parameters():
                p.requires_grad = False

            # update wrt reconstructed images
            yHat_xFake = decD(xHat, ref)
            minimaxDecDLoss = crit_decD(yHat_xFake, y_xReal)

            shuffle_inds = torch.randperm(x.shape[0])
            z = torch.randn(z.shape)
            xHat = dec(z, ref, classes_onehot[shuffle_inds])
            yHat_xFake2 = decD(xHat, ref)
            minimaxDecDLoss2 = crit_decD(yHat_xFake2, y_xReal[shuffle_inds])

            minimaxDecDLoss = (minimaxDecDLoss + minimaxDecDLoss2) / 2
            minimaxDecDLoss.mul(self.lambda_decD_loss).backward()
            minimaxDecDLoss = minimaxDecDLoss.item()
        else:
            minimaxDecDLoss = 0

        opt_dec.step()
        return [recon_loss, kld_loss, minimaxDecDLoss, decDLoss], zLatent


def build_model():
    enc, dec, decD = Enc(), Dec(), DecD()
    return Model(
        decD=decD,
        opt_decD=torch.optim.Adam(decD.parameters(), lr=2e-4),
        crit_decD=nn.CrossEntropyLoss(),
        enc=enc,
        dec=dec,
        opt_enc=torch.optim.Adam(enc.parameters(), lr=2e-4),
        opt_dec=torch.optim.Adam(dec.parameters(), lr=2e-4),
        crit_recon=nn.BCELoss(),
        data_provider=DataProvider(),
    )


def run():
    torch.manual_seed(0)
    model = build_model()
    for _ in range(2):
        errors, _ = model.iteration()
    return errors


if __name__ == "__main__":
    run()
