"""A generator's adversarial loss is computed on the discriminator's detached prediction: the
term is a constant, only the reconstruction term trains the generator."""
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
discriminator = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
bce = nn.BCELoss()
x, target = torch.randn(6, 4), torch.randn(6, 4)
for _ in range(2):
    fake = generator(x)
    adversarial = bce(discriminator(fake).detach(), torch.ones(6, 1))  # PRIMARY
    reconstruction = (fake - target).abs().mean()
    loss = adversarial + 10.0 * reconstruction
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in generator.parameters()]
