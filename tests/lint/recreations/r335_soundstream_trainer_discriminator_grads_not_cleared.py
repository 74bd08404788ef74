"""audiolm-pytorch's `SoundStreamTrainer.train_step` backpropagates the
generator loss, whose adversarial term runs the discriminator on the
reconstruction, steps and clears the generator's optimizer, then
backpropagates the discriminator loss and steps the discriminator's
optimizer.  Nothing cleared the discriminator's gradients before its own
backward pass, so its step followed the generator loss's gradient as well
("shouldn't we first set the discriminator grads to zero before calling the
backward on the discriminator losses?"; the author: "i may have this
discriminator bug in a number of other repos too").  Nothing raises.  The fix
calls `self.discr_optim.zero_grad()` before the discriminator's backward.
Buggy line: `loss.backward()` of the generator in `train_step`, which fills
the discriminator's `.grad` that `self.discr_optim.step()` later reads.
Expected finding: none by default (no rule follows which losses reach an
optimizer's parameters).
Source: https://github.com/lucidrains/audiolm-pytorch/issues/48"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoundStream(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv1d(1, 4, 3, padding=1)
        self.decoder = nn.Conv1d(4, 1, 3, padding=1)
        self.discriminator = nn.Sequential(nn.Conv1d(1, 2, 3), nn.Flatten(), nn.Linear(12, 1))

    def non_discr_parameters(self):
        return list(self.encoder.parameters()) + list(self.decoder.parameters())

    def forward(self, wave, return_discr_loss=False):
        recon = self.decoder(torch.tanh(self.encoder(wave)))
        if return_discr_loss:
            real, fake = self.discriminator(wave), self.discriminator(recon.detach())
            return (F.relu(1 - real) + F.relu(1 + fake)).mean()
        adversarial = -self.discriminator(recon).mean()
        return F.l1_loss(recon, wave) + 0.1 * adversarial


class SoundStreamTrainer:
    def __init__(self, soundstream, lr=1e-3):
        self.soundstream = soundstream
        self.optim = torch.optim.SGD(soundstream.non_discr_parameters(), lr=lr)
        self.discr_optim = torch.optim.SGD(soundstream.discriminator.parameters(), lr=lr)
        self.discr_grads_before_own_backward = []

    def train_step(self, wave):
        loss = self.soundstream(wave)
        loss.backward()  # missed: none
        self.optim.step()
        self.optim.zero_grad()
        discr_loss = self.soundstream(wave, return_discr_loss=True)
        self.discr_grads_before_own_backward.append(self.soundstream.discriminator[2].weight.grad)
        discr_loss.backward()
        self.discr_optim.step()
        self.discr_optim.zero_grad()


def bug_shows():
    """Before its own backward pass the discriminator already holds a
    gradient (the generator loss's), which its step adds to its own."""
    torch.manual_seed(0)
    trainer = SoundStreamTrainer(SoundStream())
    trainer.train_step(torch.randn(2, 1, 8))
    stale = trainer.discr_grads_before_own_backward[0]
    return stale is not None and bool(stale.abs().sum() > 0)
