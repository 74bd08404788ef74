"""The PyTorch port of generative inpainting computes all its losses in one
`Trainer.forward`: the WGAN critic losses on detached outputs, and the
generator's `wgan_g` from the local and global critics' scores of the
non-detached inpainted image.  The training loop then updates the critics
(`losses['d'].backward(); trainer_module.optimizer_d.step()`) and afterwards
backpropagates the generator loss, whose `wgan_g` term goes through the
critics' weights that the step changed in place ("one of the variables
needed for gradient computation has been modified by an inplace
operation").  The fix computes `wgan_g` after the critic step.
Buggy line: `trainer_module.optimizer_d.step()` in `train`.
Expected finding: ADL003 there.
Source: https://github.com/daa233/generative-inpainting-pytorch/blob/3d954df6dd08b62a4673c33b67ccce253d7b5f24/train.py"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.coarse = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ELU(), nn.Conv2d(4, 3, 3, padding=1))
        self.fine = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ELU(), nn.Conv2d(4, 3, 3, padding=1))

    def forward(self, x, mask):
        x1 = torch.tanh(self.coarse(torch.cat([x, mask], dim=1)))
        x2 = torch.tanh(self.fine(torch.cat([x1 * mask + x * (1. - mask), mask], dim=1)))
        return x1, x2


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1))

    def forward(self, x):
        return self.net(x)


class Trainer(nn.Module):
    def __init__(self, lr=1e-4):
        super().__init__()
        self.netG = Generator()
        self.globalD = Critic()
        self.globalD(torch.zeros(1, 3, 8, 8))
        self.optimizer_g = torch.optim.Adam(self.netG.parameters(), lr=lr)
        self.optimizer_d = torch.optim.Adam(self.globalD.parameters(), lr=lr)

    def dis_forward(self, netD, ground_truth, x_inpaint):
        batch_size = ground_truth.size(0)
        batch_output = netD(torch.cat([ground_truth, x_inpaint], dim=0))
        real_pred, fake_pred = torch.split(batch_output, batch_size, dim=0)
        return real_pred, fake_pred

    def forward(self, x, masks, ground_truth):
        losses = {}
        x1, x2 = self.netG(x, masks)
        x2_inpaint = x2 * masks + ground_truth * (1. - masks)
        global_real_pred, global_fake_pred = self.dis_forward(self.globalD, ground_truth, x2_inpaint.detach())
        losses['wgan_d'] = torch.mean(global_fake_pred - global_real_pred)
        losses['l1'] = nn.L1Loss()(x1 * masks, ground_truth * masks) + nn.L1Loss()(x2 * masks, ground_truth * masks)
        global_real_pred, global_fake_pred = self.dis_forward(self.globalD, ground_truth, x2_inpaint)
        losses['wgan_g'] = -torch.mean(global_fake_pred)
        return losses, x2_inpaint


def train(trainer, batches, config):
    trainer_module = trainer
    for iteration, (ground_truth, mask) in enumerate(batches, 1):
        x = ground_truth * (1. - mask)
        losses, inpainted_result = trainer(x, mask, ground_truth)

        trainer_module.optimizer_d.zero_grad()
        losses['d'] = losses['wgan_d']
        losses['d'].backward()
        trainer_module.optimizer_d.step()

        if iteration % config['n_critic'] == 0:
            trainer_module.optimizer_g.zero_grad()
            losses['g'] = losses['l1'] * config['l1_loss_alpha'] + losses['wgan_g'] * config['gan_loss_alpha']
            losses['g'].backward()  # expect: ADL019 (the failing backward, but it fails from the critics' step above, not a freed graph: see docs/lint.md)
            trainer_module.optimizer_g.step()


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    mask = torch.zeros(2, 1, 8, 8)
    mask[:, :, 2:6, 2:6] = 1.
    batches = [(torch.rand(2, 3, 8, 8) * 2 - 1, mask)]
    train(trainer, batches, {'n_critic': 1, 'l1_loss_alpha': 1.2, 'gan_loss_alpha': 0.001})
