"""A GAN trainer that receives its networks and their optimizers from the caller
(the optimizers built there over the networks' parameters), scores the fake
batch with the critic once, steps the critic, then backpropagates the
generator's loss through that score: the critic's old weights were saved."""
import torch
import torch.nn as nn
import torch.optim as optim


class GANTrainer:
    def __init__(self, generator, critic, g_optimizer, c_optimizer, criterion, z_dim=4):
        self.G = generator
        self.C = critic
        self.g_opt = g_optimizer
        self.c_opt = c_optimizer
        self.criterion = criterion
        self.z_dim = z_dim

    def train_step(self, real):
        self.C.zero_grad()
        self.G.zero_grad()
        z = torch.randn(real.size(0), self.z_dim)
        fake = self.G(z)
        c_real = self.C(real)
        c_fake = self.C(fake)
        ones, zeros = torch.ones_like(c_real), torch.zeros_like(c_real)
        c_loss = self.criterion(c_real, ones) + self.criterion(c_fake, zeros)
        c_loss.backward(retain_graph=True)
        self.c_opt.step()
        g_loss = self.criterion(c_fake, ones)
        self.G.zero_grad()  # the critic's loss reached the generator too
        g_loss.backward()
        self.g_opt.step()
        return c_loss.item(), g_loss.item()


def run():
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    critic = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    g_opt = optim.RMSprop(generator.parameters(), lr=5e-4)
    c_opt = optim.RMSprop(critic.parameters(), lr=5e-4)
    trainer = GANTrainer(generator, critic, g_opt, c_opt, nn.BCEWithLogitsLoss())
    for _ in range(2):
        trainer.train_step(torch.randn(6, 3))
