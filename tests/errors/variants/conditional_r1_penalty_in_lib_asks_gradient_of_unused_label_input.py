# message: The differentiated Tensor at index 1 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# set: 29
# trigger: a conditional GAN trainer whose discriminator is configured without label conditioning
#   (use_labels=False, so forward ignores the one-hot labels); the R1 penalty helper in another file
#   asks torch.autograd.grad for the gradient at the real images and at their labels, with create_graph
# source: none found; the pattern as users write it (a conditional R1 penalty kept after an ablation)
# helpers: lib_penalty29.py
# results: penalties, discriminator
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_penalty29 import r1_penalty  # noqa: E402


class Discriminator(nn.Module):
    def __init__(self, features=6, classes=3, use_labels=True):
        super().__init__()
        self.use_labels = use_labels
        self.body = nn.Sequential(nn.Linear(features, 8), nn.Softplus(), nn.Linear(8, 1))
        self.embed = nn.Linear(classes, features)

    def forward(self, images, onehot):
        if self.use_labels:
            images = images + self.embed(onehot)
        return self.body(images)


class GanTrainer:
    def __init__(self, discriminator, gamma=10.0):
        self.discriminator = discriminator
        self.optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.05)
        self.gamma = gamma

    def discriminator_step(self, real, fake, onehot):
        self.optimizer.zero_grad()
        loss = nn.functional.softplus(-self.discriminator(real, onehot)).mean() \
            + nn.functional.softplus(self.discriminator(fake, onehot)).mean()
        penalty = r1_penalty(self.discriminator, real, onehot)
        (loss + self.gamma / 2 * penalty).backward()
        self.optimizer.step()
        return penalty.detach()


torch.manual_seed(0)
discriminator = Discriminator(use_labels=False)
trainer = GanTrainer(discriminator)
penalties = []
for step in range(3):
    real, fake = torch.randn(5, 6), torch.randn(5, 6) * 2
    onehot = nn.functional.one_hot(torch.randint(0, 3, (5,)), 3).float()
    penalties.append(trainer.discriminator_step(real, fake, onehot))
