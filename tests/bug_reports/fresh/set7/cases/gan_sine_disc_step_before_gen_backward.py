"""GAN that learns to paint sine curves (a tutorial): the discriminator's loss is backpropagated
with `retain_graph=True` and `opt_D.step()` updates the discriminator's weights in place; only then
is the generator's loss, whose graph goes through the same discriminator and saved its old weights,
backpropagated, so backward fails (PyTorch >= 1.5 checks the saved weights' versions).
Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/89 (406_GAN.py "one of the variables
needed for gradient computation has been modified by an inplace operation ... output 0 of
TBackward"; answer: opt_D.step() changes the parameters; fixed by a pull request that updates the
generator first and feeds the discriminator a detached painting).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
BATCH, IDEAS, POINTS = 16, 5, 15
PAINT_POINTS = torch.linspace(-1, 1, POINTS).repeat(BATCH, 1)


def artist_works():
    a = torch.rand(BATCH, 1) + 1
    return a * torch.sin(PAINT_POINTS * torch.pi) + (a - 1)


G = nn.Sequential(nn.Linear(IDEAS, 32), nn.ReLU(), nn.Linear(32, POINTS))
D = nn.Sequential(nn.Linear(POINTS, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
d_losses, g_losses = [], []
for step in range(3):
    artist_paintings = artist_works()
    G_ideas = torch.randn(BATCH, IDEAS)
    G_paintings = G(G_ideas)
    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings)
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1.0 - prob_artist1))
    G_loss = torch.mean(torch.log(1.0 - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)
    opt_D.step()
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()
    d_losses.append(D_loss.detach())
    g_losses.append(G_loss.detach())
result = {"d_losses": d_losses, "g_losses": g_losses,
          "G": [p.detach().clone() for p in G.parameters()], "D": [p.detach().clone() for p in D.parameters()]}
