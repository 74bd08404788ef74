"""Multi-task loss weighted by learned uncertainties (Kendall et al.): the log-variances are an
nn.Parameter of the trainer, but the optimizer is built from the model's parameters only, so the
weights of the two tasks never change from 1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskTrainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        self.log_vars = nn.Parameter(torch.zeros(2))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)  # PRIMARY

    def train_step(self, x, depth, label):
        out = self.model(x)
        depth_loss = F.mse_loss(out[:, 0], depth)
        class_loss = F.binary_cross_entropy_with_logits(out[:, 1], label)
        loss = (torch.exp(-self.log_vars[0]) * depth_loss + self.log_vars[0]
                + torch.exp(-self.log_vars[1]) * class_loss + self.log_vars[1])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


trainer = MultiTaskTrainer()
x, depth, label = torch.randn(32, 4), torch.randn(32), torch.randint(0, 2, (32,)).float()
losses = [trainer.train_step(x, depth, label) for _ in range(3)]
result = [*losses, *[p.detach().clone() for p in trainer.model.parameters()], trainer.log_vars.detach().clone()]
