# message: Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
# code: AD134 (catalogue: apply_requires_grad)
# set: 8
# trigger: a WGAN critic's weight clipping written with Tensor.apply_ and a Python clamp, in a
#   helper method of a Trainer-like class called after every optimizer step
# source: none found; the pattern as users write it (WGAN weight clipping, usually
#   p.data.clamp_(-c, c))
# results: scores, critic
import torch
from torch import nn


class CriticTrainer:
    def __init__(self, critic, bound):
        self.critic = critic
        self.bound = bound
        self.optimizer = torch.optim.RMSprop(critic.parameters(), lr=0.05)

    def clip_weights(self):
        bound = self.bound
        for p in self.critic.parameters():
            p.apply_(lambda v: max(-bound, min(bound, v)))  # PRIMARY

    def step(self, real, fake):
        self.optimizer.zero_grad()
        score = self.critic(fake).mean() - self.critic(real).mean()
        score.backward()
        self.optimizer.step()
        self.clip_weights()
        return score.item()


torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
trainer = CriticTrainer(critic, bound=0.1)
scores = [trainer.step(torch.randn(5, 3) + 1, torch.randn(5, 3)) for _ in range(2)]
