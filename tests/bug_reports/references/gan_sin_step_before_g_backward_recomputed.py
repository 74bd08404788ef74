import torch
import torch.nn as nn

torch.manual_seed(0)
BATCH, IDEAS, ART = 8, 5, 15
G = nn.Sequential(nn.Linear(IDEAS, 16), nn.ReLU(), nn.Linear(16, ART))
D = nn.Sequential(nn.Linear(ART, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-4)
paintings = torch.sin(torch.linspace(-1, 1, ART) * 3.1416).repeat(BATCH, 1)

for step in range(2):
    G_paintings = G(torch.randn(BATCH, IDEAS))
    prob_artist0 = D(paintings)
    prob_artist1 = D(G_paintings)
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1.0 - prob_artist1))
    G_loss = torch.mean(torch.log(1.0 - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)
    opt_D.step()
    prob_artist1 = D(G_paintings)
    G_loss = torch.mean(torch.log(1.0 - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()
