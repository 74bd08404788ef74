"""The near twin of bad_setup_builds_layers_losses_tuple_step_first: both backward passes
run before either step (the critic's gradients from the generator loss are cleared by
the order of the zero_grad calls), so no step comes between a graph and its backward."""
import torch
import torch.nn as nn


class AdversarialTrainer:
    def setup(self, cfg):
        self.generator = nn.Sequential(nn.Linear(cfg["z"], 16), nn.ReLU(), nn.Linear(16, 4))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_g = torch.optim.Adam(self.generator.parameters(), lr=1e-3)
        self.opt_c = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def compute_losses(self, real):
        fake = self.generator(torch.randn(real.size(0), 3))
        critic_loss = self.critic(fake.detach()).mean() - self.critic(real).mean()
        generator_loss = -self.critic(fake).mean()
        return critic_loss, generator_loss

    def train_step(self, real):
        critic_loss, generator_loss = self.compute_losses(real)
        self.opt_g.zero_grad()
        generator_loss.backward()
        self.opt_c.zero_grad()
        critic_loss.backward()
        self.opt_c.step()
        self.opt_g.step()


def run():
    torch.manual_seed(0)
    trainer = AdversarialTrainer()
    trainer.setup({"z": 3})
    for _ in range(2):
        trainer.train_step(torch.randn(8, 4))
