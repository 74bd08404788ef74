"""Brain tumor segmentation with missing MRI modalities (Wangyixinxin/ACN, adversarial co-training):
a discriminator aligns the latent features of the missing-modality network with those of the
full-modality one. Its Adam optimizer (`optimizer_d_style`) is built inside the batch loop, so a new
Adam starts at every iteration: its moment estimates and step count are thrown away each time and
every discriminator update is a first Adam step. Nothing fails; the discriminator trains with
another optimizer than the one configured.
Source: https://github.com/Wangyixinxin/ACN/issues/9 ("Question about discriminator optimizer
initialization inside batch loop"; the correct version builds the optimizer once, before the loop).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SegNet(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(in_channels, 8, 3, padding=1), nn.ReLU())
        self.decoder = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        latent = self.encoder(x)
        return latent, self.decoder(latent)


full_net, missing_net = SegNet(4), SegNet(1)
discriminator = nn.Sequential(nn.Conv2d(8, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten(),
                              nn.Linear(4 * 4 * 4, 1))
optimizer = torch.optim.Adam(list(full_net.parameters()) + list(missing_net.parameters()), lr=1e-3)
optimizer_d_style = torch.optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))

d_losses = []
for step in range(5):
    images = torch.randn(2, 4, 8, 8)
    masks = torch.randint(0, 2, (2, 8, 8))

    latent_full, logits_full = full_net(images)
    latent_missing, logits_missing = missing_net(images[:, :1])
    seg_loss = F.cross_entropy(logits_full, masks) + F.cross_entropy(logits_missing, masks)
    adv_loss = F.binary_cross_entropy_with_logits(discriminator(latent_missing), torch.ones(2, 1))
    optimizer.zero_grad()
    (seg_loss + 0.1 * adv_loss).backward()
    optimizer.step()

    real = F.binary_cross_entropy_with_logits(discriminator(latent_full.detach()), torch.ones(2, 1))
    fake = F.binary_cross_entropy_with_logits(discriminator(latent_missing.detach()), torch.zeros(2, 1))
    d_loss = real + fake
    optimizer_d_style.zero_grad()
    d_loss.backward()
    optimizer_d_style.step()
    d_losses.append(d_loss.detach())

result = {"d_losses": torch.stack(d_losses),
          "discriminator": [p.detach().clone() for p in discriminator.parameters()],
          "segmentation": [p.detach().clone() for p in missing_net.parameters()]}
