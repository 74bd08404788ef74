"""pytorch_HMR's trainer gets every loss from one helper, `_calc_loss`, which
runs the discriminator on the generator's predicted thetas (not detached) and
returns both the encoder's adversarial loss and the discriminator's loss.
`train()` backpropagates the encoder loss with `retain_graph=True`, steps the
encoder (`e_opt.step()`), then backpropagates the discriminator loss, whose
graph goes back through the generator just stepped in place: "modified by an
inplace operation" on current PyTorch.  The fix detaches the predicted
thetas for the discriminator's loss, or steps both after both backwards.
Buggy line: `e_opt.step()` in `HMRTrainer.train`.
Source: https://github.com/MandyMo/pytorch_HMR/issues/15"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, in_dim=6, theta_dim=5):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, theta_dim))

    def forward(self, images):
        return self.fc(images)


class Discriminator(nn.Module):
    def __init__(self, theta_dim=5):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(theta_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, real_thetas, predict_thetas):
        return self.fc(torch.cat((real_thetas, predict_thetas), dim=0))


class HMRTrainer:
    def __init__(self):
        self.generator = Generator()
        self.discriminator = Discriminator()
        self.e_opt = torch.optim.Adam(self.generator.parameters(), lr=1e-3)
        self.d_opt = torch.optim.Adam(self.discriminator.parameters(), lr=1e-3)

    def _calc_loss(self, predict_thetas, real_thetas, mosh_thetas):
        theta_disc_value = self.discriminator(mosh_thetas, predict_thetas)
        loss_theta = ((predict_thetas - real_thetas) ** 2).sum(1).mean()
        count = mosh_thetas.shape[0]
        e_disc_value, d_disc_value = theta_disc_value[count:, :], theta_disc_value[:count, :]
        e_disc_loss = torch.sum((e_disc_value - 1.0) ** 2) / e_disc_value.shape[0]
        d_disc_loss = torch.sum(e_disc_value ** 2) / e_disc_value.shape[0] + torch.sum((d_disc_value - 1) ** 2) / count
        return loss_theta, e_disc_loss, d_disc_loss

    def train(self, batches):
        e_opt, d_opt = self.e_opt, self.d_opt
        for images, real_thetas, mosh_thetas in batches:
            predict_thetas = self.generator(images)
            loss_theta, e_disc_loss, d_disc_loss = self._calc_loss(predict_thetas, real_thetas, mosh_thetas)
            e_loss = loss_theta + e_disc_loss
            d_loss = d_disc_loss

            e_opt.zero_grad()
            e_loss.backward(retain_graph=True)
            e_opt.step()  # expect: ADL003

            d_opt.zero_grad()
            d_loss.backward()
            d_opt.step()


def run():
    torch.manual_seed(0)
    HMRTrainer().train([(torch.randn(4, 6), torch.randn(4, 5), torch.randn(3, 5))])
