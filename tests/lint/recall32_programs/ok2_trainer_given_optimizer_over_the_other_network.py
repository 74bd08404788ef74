"""Correct: the optimizer stepped between the two backwards is, at the one place
the class is built, the one over the generator, and the value reused after the
step (`c_fake`) was computed from the critic and the generator's output
detached: the step writes no weight that graph saved."""
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
        rec = ((fake - real) ** 2).mean()
        c_fake = self.C(fake.detach())
        self.first.zero_grad()
        rec.backward()
        self.first.step()
        c_loss = (c_fake - 1).pow(2).mean()
        self.second.zero_grad()
        c_loss.backward()
        self.second.step()
        return rec.item(), c_loss.item()


def run():
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    critic = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    trainer = Trainer(generator, critic, optim.SGD(generator.parameters(), lr=0.1),
                      optim.SGD(critic.parameters(), lr=0.1))
    return [trainer.train_step(torch.randn(6, 3)) for _ in range(2)]
