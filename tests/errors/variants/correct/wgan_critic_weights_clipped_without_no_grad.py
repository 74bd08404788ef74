# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace)
# set: 18
# trigger: a WGAN critic's weight clipping loop after every critic step, written without .data and
#   without torch.no_grad() (for p in critic.parameters(): p.clamp_(-c, c)), inside a GAN trainer
#   class's critic_step method
# source: none found; the pattern as users write it (the original WGAN clips p.data)
# results: critic
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class WGANTrainer:
    def __init__(self, critic, clip=0.01):
        self.critic = critic
        self.clip = clip
        self.optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-3)

    def critic_step(self, real, fake):
        self.optimizer.zero_grad()
        loss = self.critic(fake).mean() - self.critic(real).mean()
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            for p in self.critic.parameters():
                p.clamp_(-self.clip, self.clip)  # PRIMARY
        return loss


torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
trainer = WGANTrainer(critic)
for _ in range(3):
    trainer.critic_step(torch.randn(6, 2) + 1.0, torch.randn(6, 2))
