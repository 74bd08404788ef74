"""Talking-head image generator trained as a conditional GAN (YuanxunLu/LiveSpeechPortraits,
models/feature2face_model.py): the feature-matching loss (L1 between the discriminator's
intermediate features on the generated and on the real frame) was computed from the
discriminator's pass over the detached fake and added to the discriminator's loss. It is a
generator loss: as written it trains the discriminator to make its own features of real and fake
frames alike, and the generator never receives it. Nothing is raised.
Source: https://github.com/YuanxunLu/LiveSpeechPortraits/issues/24 ("feature matching loss is
computed as part of the D loss ... usually, the feature matching loss is used to optimize the
generator"; the author: "You're right. I've updated the codes.").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FEATURE, IMAGE, BATCH = 6, 12, 4


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURE, 16), nn.ReLU(), nn.Linear(16, IMAGE), nn.Tanh())

    def forward(self, features):
        return self.net(features)


class Discriminator(nn.Module):
    """Returns its intermediate activations and, last, its score."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(FEATURE + IMAGE, 16), nn.LeakyReLU(0.2)),
                                     nn.Sequential(nn.Linear(16, 8), nn.LeakyReLU(0.2)),
                                     nn.Linear(8, 1)])

    def forward(self, features, image):
        outputs, h = [], torch.cat([features, image], dim=1)
        for block in self.blocks:
            h = block(h)
            outputs.append(h)
        return outputs


def gan_loss(score, is_real):
    return F.mse_loss(score, torch.full_like(score, 1.0 if is_real else 0.0))


generator, discriminator = Generator(), Discriminator()
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
audio_features = torch.randn(BATCH, FEATURE)
real_frames = torch.tanh(torch.randn(BATCH, IMAGE))

losses = []
for step in range(3):
    fake_frames = generator(audio_features)
    pred_fake_for_d = discriminator(audio_features, fake_frames.detach())
    pred_real = discriminator(audio_features, real_frames)
    pred_fake_for_g = discriminator(audio_features, fake_frames)

    loss_g_gan = gan_loss(pred_fake_for_g[-1], True)
    loss_g_l1 = F.l1_loss(fake_frames, real_frames) * 10.0
    loss_d = 0.5 * (gan_loss(pred_fake_for_d[-1], False) + gan_loss(pred_real[-1], True))
    loss_fm = sum(F.l1_loss(pred_fake_for_d[i], pred_real[i].detach()) for i in range(len(pred_real) - 1))
    loss_g = loss_g_gan + loss_g_l1
    loss_d = loss_d + loss_fm

    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    losses.append(torch.stack([loss_g.detach(), loss_d.detach()]))

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in [*generator.parameters(), *discriminator.parameters()]]}
