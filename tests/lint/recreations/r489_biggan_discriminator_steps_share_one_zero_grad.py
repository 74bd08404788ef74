"""BigGAN-PyTorch's `GAN_training_function` runs `num_D_steps` discriminator
steps per generator step, each accumulating `num_D_accumulations` backward
passes; the `D.optim.zero_grad()` meant for the top of each D step sat before
the loop, so from the second D step on, the step applies its own gradient
plus the previous step's.  The author: "Good catch--this was a typo!"
(harmless with the default `num_D_steps=1`).  Nothing raises.
Buggy line: `D.optim.zero_grad()` outside the loop over D steps.
Source: https://github.com/ajbrock/BigGAN-PyTorch/issues/25"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def discriminator_loss(dis_fake, dis_real):
    return torch.mean(F.relu(1. - dis_real)), torch.mean(F.relu(1. + dis_fake))


class Model(nn.Module):
    def __init__(self, lr, d=6, z=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d if z is None else z, 8), nn.ReLU(), nn.Linear(8, d if z is not None else 1))
        self.optim = torch.optim.Adam(self.parameters(), lr=lr, betas=(0.0, 0.999))

    def forward(self, x):
        return self.net(x)


def GAN_training_function(G, D, config, record=None):
    def train(x):
        G.optim.zero_grad()
        D.optim.zero_grad()
        x = torch.split(x, config["batch_size"])
        counter = 0
        for step_index in range(config["num_D_steps"]):
            if record is not None and D.net[0].weight.grad is not None:  # what this D step starts from
                record.append(D.net[0].weight.grad.clone())
            for accumulation_index in range(config["num_D_accumulations"]):
                z_ = torch.randn(config["batch_size"], config["dim_z"])
                with torch.no_grad():
                    fake = G(z_)
                D_real, D_fake = D(x[counter]), D(fake)
                D_loss_real, D_loss_fake = discriminator_loss(D_fake, D_real)
                D_loss = (D_loss_real + D_loss_fake) / float(config["num_D_accumulations"])
                D_loss.backward()
                counter += 1
            D.optim.step()  # expect: ADL018
        G.optim.zero_grad()
        G_loss = -torch.mean(D(G(torch.randn(config["batch_size"], config["dim_z"]))))
        G_loss.backward()
        G.optim.step()
        return {"G_loss": float(G_loss.item()), "D_loss": float(D_loss.item())}
    return train


def bug_shows():
    """The second D step starts from the first D step's gradient, not from zero."""
    torch.manual_seed(0)
    config = {"batch_size": 4, "num_D_steps": 2, "num_D_accumulations": 1, "dim_z": 3}
    G, D = Model(0.0, d=6, z=3), Model(0.0, d=6, z=None)
    record = []
    x = torch.randn(8, 6)
    GAN_training_function(G, D, config, record)(x)
    return len(record) == 1 and record[0].abs().sum().item() > 0
