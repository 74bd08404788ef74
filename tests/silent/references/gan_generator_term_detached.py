import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 6))
critic = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
gray = torch.randn(3, 10, 4)
color = torch.randn(3, 10, 6)
gen = [p.detach().clone() for p in generator.parameters()]
cri = [p.detach().clone() for p in critic.parameters()]


def generate(x, w1, b1, w2, b2):
    return F.relu(x @ w1.T + b1) @ w2.T + b2


def score(x, v1, c1, v2, c2):
    return F.leaky_relu(x @ v1.T + c1, 0.2) @ v2.T + c2


for step in range(3):  # SGD by hand: the generator's adversarial term goes through the critic to it
    leaves = [p.clone().requires_grad_() for p in gen]
    fake = generate(gray[step], *leaves)
    loss_gen = F.softplus(-score(fake, *cri)).mean() + 5.0 * (fake - color[step]).abs().mean()
    gen = [p - 0.05 * g for p, g in zip(gen, torch.autograd.grad(loss_gen, leaves))]
    leaves = [p.clone().requires_grad_() for p in cri]
    fake = fake.detach()
    loss_critic = F.softplus(-score(color[step], *leaves)).mean() + F.softplus(score(fake, *leaves)).mean()
    cri = [p - 0.05 * g for p, g in zip(cri, torch.autograd.grad(loss_critic, leaves))]
result = gen + cri
