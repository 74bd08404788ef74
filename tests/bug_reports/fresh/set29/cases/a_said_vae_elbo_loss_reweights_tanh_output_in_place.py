"""SAiD (speech-driven blendshape animation), training the blendshape-coefficient VAE: the ELBO
loss re-weights the target and the reconstruction by the per-channel standard deviation of the
coefficients before the MSE. It names them `answer_reweight = blendshape_coeffs` and
`pred_reweight = blendshape_coeffs_reconst` and then divides with `/=`, so the division lands in
the decoder's output itself: a transposed view of the `nn.Tanh()` output, which TanhBackward0
saved. backward() fails with "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [8, 32, 120]], which is output 0 of
TanhBackward0". The user reported it; the answer in the thread: replace the in-place `/=` (and
`+=`/`*=`) in the training code with ordinary division.
Source: https://github.com/yunik1004/SAiD/issues/8
expect: raises"""
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class BCVAEOutput:
    mean: torch.Tensor
    log_var: torch.Tensor
    coeffs_reconst: torch.Tensor


@dataclass
class LossStepOutput:
    reconst: torch.Tensor
    regularize: torch.Tensor
    velocity: torch.Tensor


class BCEncoder(nn.Module):
    def __init__(self, in_channels=32, z_dim=16, seq_len=24):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(in_channels, 16, 3, padding=1), nn.LeakyReLU(0.2, True))
        self.fc_mean = nn.Linear(16 * seq_len, z_dim)
        self.fc_log_var = nn.Linear(16 * seq_len, z_dim)

    def forward(self, coeffs):
        h = self.conv(coeffs.transpose(1, 2)).flatten(1)
        return self.fc_mean(h), self.fc_log_var(h)


class BCDecoder(nn.Module):
    def __init__(self, out_channels=32, seq_len=24, z_dim=16):
        super().__init__()
        self.seq_len = seq_len
        self.fc_layers = nn.Sequential(nn.Linear(z_dim, 2 * seq_len), nn.LeakyReLU(inplace=True),
                                       nn.Linear(2 * seq_len, 4 * seq_len), nn.Unflatten(1, (4, seq_len)))
        self.conv_layers = nn.Sequential(nn.Conv1d(4, 32, 3, padding=1), nn.LeakyReLU(0.2, True),
                                         nn.Conv1d(32, out_channels, 3, padding=1), nn.Tanh())

    def forward(self, latent):
        return self.conv_layers(self.fc_layers(latent)).transpose(1, 2)


class BCVAE(nn.Module):
    def __init__(self, channels=32, seq_len=24, z_dim=16):
        super().__init__()
        self.encoder = BCEncoder(channels, z_dim, seq_len)
        self.decoder = BCDecoder(channels, seq_len, z_dim)

    def forward(self, coeffs):
        mean, log_var = self.encoder(coeffs)
        eps = torch.randn_like(mean)
        latent = mean + torch.exp(0.5 * log_var) * eps
        return BCVAEOutput(mean=mean, log_var=log_var, coeffs_reconst=self.decoder(latent))


def elbo_loss(said_vae, data, std, device):
    blendshape_coeffs = data.to(device)
    output = said_vae(blendshape_coeffs)
    batch_size = blendshape_coeffs.shape[0]
    mean, log_var = output.mean, output.log_var
    blendshape_coeffs_reconst = output.coeffs_reconst

    criterion_reconst = nn.MSELoss(reduction="sum")
    criterion_velocity = nn.MSELoss(reduction="sum")

    answer_reweight = blendshape_coeffs
    pred_reweight = blendshape_coeffs_reconst
    if std is not None:
        answer_reweight /= std.view(1, 1, -1)
        pred_reweight /= std.view(1, 1, -1)

    loss_reconst = 0.5 * criterion_reconst(answer_reweight, pred_reweight) / batch_size
    loss_kld = 0.5 * torch.mean(torch.sum(torch.pow(mean, 2) + torch.exp(log_var) - log_var - 1, dim=1))
    answer_diff = answer_reweight[:, 1:, :] - answer_reweight[:, :-1, :]
    pred_diff = pred_reweight[:, 1:, :] - pred_reweight[:, :-1, :]
    loss_vel = 0.5 * criterion_velocity(pred_diff, answer_diff) / batch_size
    return LossStepOutput(reconst=loss_reconst, regularize=loss_kld, velocity=loss_vel)


device = torch.device("cpu")
said_vae = BCVAE()
optimizer = torch.optim.Adam(said_vae.parameters(), lr=1e-3)
dataset = torch.rand(32, 24, 32) * 0.8
std = dataset.std(dim=(0, 1)).view(1, -1) + 0.1
beta, weight_vel = 0.1, 1.0
losses_seen = []
for epoch in range(3):
    for data in dataset.split(8):
        losses = elbo_loss(said_vae, data, std, device)
        loss = losses.reconst + beta * losses.regularize + weight_vel * losses.velocity
        loss.backward()
        torch.nn.utils.clip_grad_norm_(said_vae.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        losses_seen.append(loss.detach())

result = {"losses": torch.stack(losses_seen), "params": [p.detach().clone() for p in said_vae.parameters()]}
