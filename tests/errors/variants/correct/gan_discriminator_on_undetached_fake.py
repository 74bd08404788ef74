# message: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed).
# code: AD302 (catalogue: backward_twice)
# trigger: a GAN loop: the discriminator's loss uses the generator's output without detach(),
#   its backward() frees the generator's graph, and the generator's backward() needs it again
# source: none found; the pattern as users write it
# results: losses, G, D
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
G, D = nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
losses = []
for _ in range(2):
    real, z = torch.randn(4, 3), torch.randn(4, 2)
    fake = G(z)
    opt_d.zero_grad()
    d_real = D(real)
    d_fake = D(fake.detach())  # PRIMARY
    d_loss = F.binary_cross_entropy(d_real, torch.ones(4, 1)) + F.binary_cross_entropy(d_fake, torch.zeros(4, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = F.binary_cross_entropy(D(fake), torch.ones(4, 1))
    g_loss.backward()
    opt_g.step()
    losses.append((d_loss.item(), g_loss.item()))
