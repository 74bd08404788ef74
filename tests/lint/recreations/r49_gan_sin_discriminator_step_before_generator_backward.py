"""A GAN that fits sin(x): the discriminator's loss is backpropagated and
`opt_D.step()` runs, then the generator's loss, computed from the same
discriminator outputs, is backpropagated ("modified by an inplace operation",
PyTorch >= 1.5).
Source: https://github.com/pytorch/pytorch/issues/39141"""
import numpy as np
import torch
import torch.nn as nn

BATCH_SIZE = 8
LR_G = 0.0001
LR_D = 0.0001
N_IDEAS = 5
ART_COMPONENTS = 15
PAINT_POINTS = np.vstack([np.linspace(-1, 1, ART_COMPONENTS) for _ in range(BATCH_SIZE)])


def artist_works():
    r = 0.02 * np.random.randn(1, ART_COMPONENTS)
    paintings = np.sin(PAINT_POINTS * np.pi) + r
    return torch.from_numpy(paintings).float()


def run(steps=2):
    torch.manual_seed(0)
    np.random.seed(0)
    G = nn.Sequential(nn.Linear(N_IDEAS, 32), nn.ReLU(), nn.Linear(32, ART_COMPONENTS))
    D = nn.Sequential(nn.Linear(ART_COMPONENTS, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
    opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
    opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)
    for step in range(steps):
        artist_paintings = artist_works()
        G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)
        G_paintings = G(G_ideas)
        prob_artist0 = D(artist_paintings)
        prob_artist1 = D(G_paintings)
        D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1.0 - prob_artist1))
        G_loss = torch.mean(torch.log(1.0 - prob_artist1))

        opt_D.zero_grad()
        D_loss.backward(retain_graph=True)
        opt_D.step()  # expect: ADL003

        opt_G.zero_grad()
        G_loss.backward()
        opt_G.step()
