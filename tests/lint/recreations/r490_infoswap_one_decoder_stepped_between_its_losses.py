"""An InfoSwap re-implementation (the issue's reporter) uses a single decoder
three times per iteration: to reconstruct the source, to reconstruct the
target and to render the swapped face, all decoded first; each loss is then
backpropagated (keeping the graph) and the decoder's optimizer stepped before
the next one.  The second backward runs through the decoder's call that
saved the weights the first step changed: "one of the variables needed for
gradient computation has been modified by an inplace operation".  Copying
the decoder three times hid it; summing the losses and stepping once (or
decoding again after each step) is the fix.
Buggy line: `self.opt_dec.step()` between the losses in `SwapTrainer.train_step`.
Source: https://github.com/GGGHSL/InfoSwap-master/issues/12"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d=8, z=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 8), nn.ReLU(), nn.Linear(8, z))

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Module):
    def __init__(self, z=4, d=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z, 8), nn.ReLU(), nn.Linear(8, d))

    def forward(self, z):
        return self.net(z)


class AIIGenerator(nn.Module):
    def __init__(self, z=4):
        super().__init__()
        self.mix = nn.Linear(2 * z, z)

    def forward(self, z_id, z_attr):
        return self.mix(torch.cat([z_id, z_attr], dim=1))


class SwapTrainer:
    def __init__(self):
        torch.manual_seed(0)
        self.encoder = Encoder()
        self.encoder.requires_grad_(False)  # pretrained
        self.decoder = Decoder()
        self.aii = AIIGenerator()
        self.opt_dec = torch.optim.Adam(self.decoder.parameters(), lr=1e-4)
        self.opt_aii = torch.optim.Adam(self.aii.parameters(), lr=1e-4)

    def train_step(self, x_s, x_t):
        z_s, z_t = self.encoder(x_s), self.encoder(x_t)
        rec_s = self.decoder(z_s)
        rec_t = self.decoder(z_t)
        swapped = self.decoder(self.aii(z_s, z_t))
        losses = [F.l1_loss(rec_s, x_s), F.l1_loss(rec_t, x_t),
                  F.mse_loss(self.encoder(swapped), z_s) + 0.1 * F.l1_loss(swapped, x_t)]
        for i, loss in enumerate(losses):
            self.opt_dec.zero_grad()
            self.opt_aii.zero_grad()
            loss.backward(retain_graph=i < len(losses) - 1)
            self.opt_dec.step()  # expect: ADL003
            self.opt_aii.step()  # expect: ADL003  (false finding of the first run: no gradient reaches the mixer before the last loss)


def run():
    trainer = SwapTrainer()
    trainer.train_step(torch.randn(4, 8), torch.randn(4, 8))
