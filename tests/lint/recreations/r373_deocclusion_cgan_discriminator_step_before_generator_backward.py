"""deocclusion's content-completion CGAN (`PartialCompletionContentCGAN`)
computes the discriminator's loss on the completed image detached and the
generator's loss through the discriminator, then updates: first
`dis_loss.backward(); self.optimD.step()`, then `gen_loss.backward()`.  The
discriminator's step rewrote its weights in place, which the generator loss's
graph saved, and backward fails ("modified by an inplace operation").  The
fix backpropagates and steps the generator first.
Buggy line: `self.optimD.step()` in `PartialCompletionContentCGAN.step`.
Source: https://github.com/XiaohangZhan/deocclusion/pull/39"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class InpaintNet(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.enc = nn.Linear(channels * 16 + 16, 32)
        self.dec = nn.Linear(32, channels * 16)

    def forward(self, rgb_erased, mask):
        h = torch.relu(self.enc(torch.cat([rgb_erased.flatten(1), mask.flatten(1)], 1)))
        return torch.sigmoid(self.dec(h)).view_as(rgb_erased)


class PatchDiscriminator(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.fc1 = nn.Linear(channels * 16, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(F.leaky_relu(self.fc1(x.flatten(1)), 0.2))


class PartialCompletionContentCGAN:
    def __init__(self, lr=1e-3, lambda_gan=0.1):
        self.model = InpaintNet()
        self.netD = PatchDiscriminator()
        self.optim = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.optimD = torch.optim.Adam(self.netD.parameters(), lr=lr)
        self.criterion_gan = nn.BCEWithLogitsLoss()
        self.lambda_gan = lambda_gan

    def step(self, rgb, mask):
        output = self.model(rgb * (1 - mask), mask)
        completed = output * mask + rgb * (1 - mask)

        pred_fake = self.netD(completed.detach())
        pred_real = self.netD(rgb)
        dis_loss = 0.5 * (self.criterion_gan(pred_fake, torch.zeros_like(pred_fake))
                          + self.criterion_gan(pred_real, torch.ones_like(pred_real)))

        pred_fake_g = self.netD(completed)
        gen_loss = F.l1_loss(output, rgb) + self.lambda_gan * self.criterion_gan(pred_fake_g, torch.ones_like(pred_fake_g))

        self.optimD.zero_grad()
        dis_loss.backward()
        self.optimD.step()  # expect: ADL003

        self.optim.zero_grad()
        gen_loss.backward()
        self.optim.step()
        return gen_loss.item(), dis_loss.item()


def run():
    torch.manual_seed(0)
    trainer = PartialCompletionContentCGAN()
    rgb = torch.rand(2, 3, 4, 4)
    mask = (torch.rand(2, 1, 4, 4) > 0.5).float()
    trainer.step(rgb, mask)
