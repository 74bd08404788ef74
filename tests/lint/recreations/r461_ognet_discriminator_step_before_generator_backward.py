"""OGNet's `Model.train` clears both optimizers, runs the generator on the
noisy input and the discriminator on the generator's output and on the
input, backpropagates the discriminator's loss (keeping the graph) and steps
the discriminator, and only then backpropagates the generator's loss, which
goes through the discriminator's outputs computed before that step.  On
PyTorch >= 1.5 the generator's backward raises "one of the variables needed
for gradient computation has been modified by an inplace operation" (the
discriminator's weights, changed by its step).  The fix backpropagates both
losses before either step (or computes the generator's loss after the
discriminator's step).
Buggy line: `d_optim.step()` before `g_loss.backward()` in `Model.train`.
Source: https://github.com/xaggi/OGNet/issues/8"""
import torch
import torch.nn as nn


class Model:
    def __init__(self):
        torch.manual_seed(0)
        self.g = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.d = nn.Sequential(nn.Linear(8, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1), nn.Sigmoid())
        self.adversarial_loss = nn.BCELoss()
        self.reconstruction_loss = nn.MSELoss()

    def train(self, dataloader):
        g_optim = torch.optim.Adam(self.g.parameters(), lr=1e-3)
        d_optim = torch.optim.Adam(self.d.parameters(), lr=1e-4)
        for input in dataloader:
            fake = torch.ones(input.size(0), 1)
            valid = torch.zeros(input.size(0), 1)
            g_optim.zero_grad()
            d_optim.zero_grad()
            input_w_noise = input + 0.1 * torch.randn_like(input)
            g_output = self.g(input_w_noise)
            d_fake_output = self.d(g_output)
            d_real_output = self.d(input)
            d_fake_loss = self.adversarial_loss(d_fake_output, fake)
            d_real_loss = self.adversarial_loss(d_real_output, valid)
            d_sum_loss = 0.5 * (d_fake_loss + d_real_loss)
            d_sum_loss.backward(retain_graph=True)
            d_optim.step()  # expect: ADL003
            g_recon_loss = self.reconstruction_loss(g_output, input)
            g_adversarial_loss = self.adversarial_loss(d_fake_output, valid)
            g_loss = g_adversarial_loss + g_recon_loss
            g_loss.backward()
            g_optim.step()


def run():
    Model().train([torch.randn(4, 8) for _ in range(2)])
