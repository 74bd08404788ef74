"""Unknown, not a guess: the class is built twice in the file, once with the
critic's optimizer in the first slot and once with the generator's; which
modules `self.first` updates differs, so nothing is claimed.  (Each run below
works: in the second, the generator has no gradient at the first step, which
therefore writes nothing.)"""
import torch
import torch.nn as nn
import torch.optim as optim


class Trainer:
    def __init__(self, generator, critic, first_optimizer, second_optimizer):
        self.G = generator
        self.C = critic
        self.first = first_optimizer
        self.second = second_optimizer

    def train_step(self, real):
        fake = self.G(torch.randn(real.size(0), 4))
        score = self.C(fake.detach())
        loss_a = score.mean()
        self.first.zero_grad()
        self.second.zero_grad()
        loss_a.backward(retain_graph=True)
        self.first.step()
        loss_b = ((fake - real) ** 2).mean()
        loss_b.backward()
        self.second.step()


def run():
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    critic = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    a = Trainer(generator, critic, optim.SGD(critic.parameters(), lr=0.1),
                optim.SGD(generator.parameters(), lr=0.1))
    a.train_step(torch.randn(6, 3))
    b = Trainer(generator, critic, optim.SGD(generator.parameters(), lr=0.1),
                optim.SGD(critic.parameters(), lr=0.1))
    b.train_step(torch.randn(6, 3))
