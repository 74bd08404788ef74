import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False)  # PRIMARY


torch.manual_seed(0)
critic = Critic()
optimizer = torch.optim.SGD(critic.parameters(), lr=0.05)
real, fake = torch.randn(4, 3), torch.randn(4, 3)
penalties = []
for _ in range(2):
    alpha = torch.rand(4, 1)
    interpolated = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(interpolated)
    gradients = torch.autograd.grad(score.sum(), interpolated, create_graph=True)[0]
    penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    optimizer.zero_grad()
    (critic(fake).mean() - critic(real).mean() + 10 * penalty).backward()
    optimizer.step()
    penalties.append(penalty.item())
