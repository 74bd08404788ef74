"""BPPNet (image dehazing with a pyramid generator and a conditional discriminator): each iteration
computes the discriminator loss and the generator loss together from one `D(fake)` forward, then
backpropagates the discriminator loss (keeping the graph), steps the discriminator optimizer, and
only then backpropagates the generator loss. `optimizer_D.step()` has modified the discriminator's
weights in place, and the generator loss's graph still holds them through `D(fake)`, so
`g_loss.backward()` raises "one of the variables needed for gradient computation has been modified
by an inplace operation".
Source: https://github.com/ayu-22/BPPNet-Back-Projected-Pyramid-Network/issues/6 (RuntimeError
"... which is output 4 of BroadcastBackward, is at version 2; expected version 1"; maintainer:
"first do the gradient descent on the discriminator and then calculate the generator loss and then
do the gradient descent on generator loss").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CH, SIZE, BATCH = 3, 8, 2


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(CH, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, CH, 3, padding=1))

    def forward(self, hazy):
        return torch.sigmoid(self.net(hazy) + hazy)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2 * CH, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, hazy, image):
        return self.net(torch.cat([hazy, image], dim=1))


G, D = Generator(), Discriminator()
optimizer_G = torch.optim.Adam(G.parameters(), lr=1e-3)
optimizer_D = torch.optim.Adam(D.parameters(), lr=1e-3)
hazy = torch.rand(BATCH, CH, SIZE, SIZE)
clear = torch.rand(BATCH, CH, SIZE, SIZE)

d_losses, g_losses = [], []
for it in range(3):
    fake = G(hazy)
    pred_real = D(hazy, clear)
    pred_fake = D(hazy, fake.detach())
    d_loss = (F.binary_cross_entropy_with_logits(pred_real, torch.ones_like(pred_real))
              + F.binary_cross_entropy_with_logits(pred_fake, torch.zeros_like(pred_fake)))
    optimizer_D.zero_grad()
    d_loss.backward()
    optimizer_D.step()
    pred_fake = D(hazy, fake)
    g_loss = F.binary_cross_entropy_with_logits(pred_fake, torch.ones_like(pred_fake)) + 10 * F.mse_loss(fake, clear)
    optimizer_G.zero_grad()
    g_loss.backward()
    optimizer_G.step()
    d_losses.append(d_loss.detach())
    g_losses.append(g_loss.detach())

result = {"d_losses": d_losses, "g_losses": g_losses,
          "G": [p.detach().clone() for p in G.parameters()], "D": [p.detach().clone() for p in D.parameters()]}
