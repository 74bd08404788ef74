"""StyleMapGAN-style generator update: the adversarial loss and the latent reconstruction loss come
from one forward pass through the generator; the adversarial loss is backpropagated and stepped
first, then `(w_rec_loss * lambda_w_rec_loss).backward()` runs through the part of the graph the
first backward already freed.
Source: https://github.com/naver-ai/StyleMapGAN/issues/16 ("Trying to backward through the graph a
second time" at the w_rec_loss backward; the fix in the report: run backward once for the sum of
both losses, then step).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
mapping = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2))
generator = nn.Sequential(nn.Linear(8, 12), nn.Tanh())
encoder = nn.Linear(12, 8)
discriminator = nn.Sequential(nn.Linear(12, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1))
g_optim = torch.optim.Adam([*mapping.parameters(), *generator.parameters(), *encoder.parameters()], lr=2e-3)
lambda_adv_loss, lambda_w_rec_loss = 1.0, 0.5


def generator_forward(noise):
    stylecode = mapping(noise)
    fake_img = generator(stylecode)
    adv_loss = nn.functional.softplus(-discriminator(fake_img)).mean()
    w_rec_loss = (encoder(fake_img) - stylecode).pow(2).mean()
    return adv_loss, w_rec_loss, stylecode


losses = []
for step in range(2):
    adv_loss, w_rec_loss, stylecode = generator_forward(torch.randn(5, 4))
    g_loss = adv_loss * lambda_adv_loss
    g_optim.zero_grad()
    g_w_rec_loss = g_loss + w_rec_loss * lambda_w_rec_loss
    g_w_rec_loss.backward()
    g_optim.step()
    losses.append(torch.stack([adv_loss.detach(), w_rec_loss.detach()]))
result = {"losses": losses, "params": [p.detach() for p in g_optim.param_groups[0]["params"]]}
