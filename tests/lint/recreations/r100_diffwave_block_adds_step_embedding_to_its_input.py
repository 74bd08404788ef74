"""DiffWave vocoder: each residual block starts with `h = x` and adds the
diffusion-step embedding in place, `h += part_t`, so it writes the block's
input.  The first block's input is the output of `nn.Sequential(Conv(...),
nn.ReLU())`, which ReLU keeps for backward, and `loss.backward()` in the
training loop fails ("modified by an inplace operation").
Source: https://github.com/philsyn/DiffWave-Vocoder/issues/2"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def swish(x):
    return x * torch.sigmoid(x)


def calc_diffusion_step_embedding(diffusion_steps, diffusion_step_embed_dim_in):
    half_dim = diffusion_step_embed_dim_in // 2
    _embed = math.log(10000) / (half_dim - 1)
    _embed = torch.exp(torch.arange(half_dim) * -_embed)
    _embed = diffusion_steps * _embed
    return torch.cat((torch.sin(_embed), torch.cos(_embed)), 1)


class Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, dilation=1):
        super(Conv, self).__init__()
        self.padding = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, dilation=dilation, padding=self.padding)
        nn.init.kaiming_normal_(self.conv.weight)

    def forward(self, x):
        return self.conv(x)


class Residual_block(nn.Module):
    def __init__(self, res_channels, skip_channels, dilation, diffusion_step_embed_dim_out, n_mels=4):
        super(Residual_block, self).__init__()
        self.res_channels = res_channels
        self.fc_t = nn.Linear(diffusion_step_embed_dim_out, self.res_channels)
        self.dilated_conv_layer = Conv(self.res_channels, 2 * self.res_channels, kernel_size=3, dilation=dilation)
        self.mel_conv = Conv(n_mels, 2 * self.res_channels, kernel_size=1)
        self.res_conv = nn.Conv1d(res_channels, res_channels, kernel_size=1)
        self.skip_conv = nn.Conv1d(res_channels, skip_channels, kernel_size=1)

    def forward(self, input_data):
        x, mel_spec, diffusion_step_embed = input_data
        h = x
        B, C, L = x.shape
        part_t = self.fc_t(diffusion_step_embed)
        part_t = part_t.view([B, self.res_channels, 1])
        h += part_t  # missed: ADL001
        h = self.dilated_conv_layer(h)
        mel_spec = F.interpolate(mel_spec, size=L)
        h += self.mel_conv(mel_spec)
        out = torch.tanh(h[:, :self.res_channels, :]) * torch.sigmoid(h[:, self.res_channels:, :])
        res = self.res_conv(out)
        skip = self.skip_conv(out)
        return (x + res) * math.sqrt(0.5), skip


class Residual_group(nn.Module):
    def __init__(self, res_channels, skip_channels, num_res_layers, dilation_cycle,
                 diffusion_step_embed_dim_in, diffusion_step_embed_dim_mid, diffusion_step_embed_dim_out):
        super(Residual_group, self).__init__()
        self.num_res_layers = num_res_layers
        self.diffusion_step_embed_dim_in = diffusion_step_embed_dim_in
        self.fc_t1 = nn.Linear(diffusion_step_embed_dim_in, diffusion_step_embed_dim_mid)
        self.fc_t2 = nn.Linear(diffusion_step_embed_dim_mid, diffusion_step_embed_dim_out)
        self.residual_blocks = nn.ModuleList()
        for n in range(self.num_res_layers):
            self.residual_blocks.append(Residual_block(res_channels, skip_channels,
                                                       dilation=2 ** (n % dilation_cycle),
                                                       diffusion_step_embed_dim_out=diffusion_step_embed_dim_out))

    def forward(self, input_data):
        x, mel_spectrogram, diffusion_steps = input_data
        diffusion_step_embed = calc_diffusion_step_embedding(diffusion_steps, self.diffusion_step_embed_dim_in)
        diffusion_step_embed = swish(self.fc_t1(diffusion_step_embed))
        diffusion_step_embed = swish(self.fc_t2(diffusion_step_embed))
        h = x
        skip = 0
        for n in range(self.num_res_layers):
            h, skip_n = self.residual_blocks[n]((h, mel_spectrogram, diffusion_step_embed))
            skip += skip_n
        return skip * math.sqrt(1.0 / self.num_res_layers)


class WaveNet_vocoder(nn.Module):
    def __init__(self, in_channels=1, res_channels=8, skip_channels=8, out_channels=1, num_res_layers=2,
                 dilation_cycle=2, diffusion_step_embed_dim_in=8, diffusion_step_embed_dim_mid=16,
                 diffusion_step_embed_dim_out=16):
        super(WaveNet_vocoder, self).__init__()
        self.init_conv = nn.Sequential(Conv(in_channels, res_channels, kernel_size=1), nn.ReLU())
        self.residual_layer = Residual_group(res_channels, skip_channels, num_res_layers, dilation_cycle,
                                             diffusion_step_embed_dim_in, diffusion_step_embed_dim_mid,
                                             diffusion_step_embed_dim_out)
        self.final_conv = nn.Sequential(Conv(skip_channels, skip_channels, kernel_size=1), nn.ReLU(),
                                        Conv(skip_channels, out_channels, kernel_size=1))

    def forward(self, input_data):
        audio, mel_spectrogram, diffusion_steps = input_data
        x = audio
        x = self.init_conv(x)
        x = self.residual_layer((x, mel_spectrogram, diffusion_steps))
        return self.final_conv(x)


def training_loss(net, loss_fn, X, diffusion_hyperparams):
    T, Alpha_bar = diffusion_hyperparams["T"], diffusion_hyperparams["Alpha_bar"]
    mel_spectrogram, audio = X
    B, C, L = audio.shape
    diffusion_steps = torch.randint(T, size=(B, 1, 1))
    z = torch.randn(audio.shape)
    transformed_X = torch.sqrt(Alpha_bar[diffusion_steps]) * audio + torch.sqrt(1 - Alpha_bar[diffusion_steps]) * z
    epsilon_theta = net((transformed_X, mel_spectrogram, diffusion_steps.view(B, 1)))
    return loss_fn(epsilon_theta, z)


def train(trainloader, T=10, learning_rate=2e-4):
    net = WaveNet_vocoder()
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    Beta = torch.linspace(1e-4, 0.02, T)
    diffusion_hyperparams = {"T": T, "Alpha_bar": torch.cumprod(1 - Beta, dim=0)}
    for mel_spectrogram, audio in trainloader:
        audio = audio.unsqueeze(1)
        optimizer.zero_grad()
        X = (mel_spectrogram, audio)
        loss = training_loss(net, nn.MSELoss(), X, diffusion_hyperparams)
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    train([(torch.randn(2, 4, 4), torch.randn(2, 16)) for _ in range(2)])
