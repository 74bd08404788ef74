"""ReStyle's training coach starts every batch's iterative refinement from
the generator's average image: `self.avg_image` is decoded once, in the
coach's `__init__`, from the average latent.  With a generator whose
parameters require grad (a converted StyleGAN2 trained along with the
encoder), that image carries the decoder's graph; every batch concatenates
it to the input and calls `loss.backward()`, so the second batch's backward
reaches the graph the first one freed ("Trying to backward through the
graph a second time, but the saved intermediate results have already been
freed").  The fix decodes the average image under `torch.no_grad()` (or
`.detach()`es it).
Buggy line: `loss.backward()` in `perform_train_iteration_on_batch`,
through `self.avg_image` made with the graph in `__init__`.
Expected finding: ADL019 there.
Source: https://github.com/yuval-alaluf/restyle-encoder/issues/15"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Decoder(nn.Module):
    def __init__(self, latent_dim=4, size=4):
        super().__init__()
        self.size = size
        self.fc = nn.Linear(latent_dim, 3 * size * size)

    def forward(self, latent):
        return torch.tanh(self.fc(latent)).view(-1, 3, self.size, self.size)


class Encoder(nn.Module):
    def __init__(self, latent_dim=4, size=4):
        super().__init__()
        self.conv = nn.Conv2d(6, 4, 3, padding=1)
        self.fc = nn.Linear(4 * size * size, latent_dim)

    def forward(self, x):
        return self.fc(F.leaky_relu(self.conv(x), 0.2).flatten(1))


class pSp(nn.Module):
    def __init__(self, latent_dim=4):
        super().__init__()
        self.encoder = Encoder(latent_dim)
        self.decoder = Decoder(latent_dim)
        self.register_buffer('latent_avg', torch.zeros(latent_dim))

    def forward(self, x, latent=None, average_code=False):
        if average_code:
            codes = x
        else:
            codes = self.encoder(x)
            codes = codes + (self.latent_avg if latent is None else latent)
        return self.decoder(codes), codes


class Coach:
    def __init__(self, n_iters_per_batch=2):
        self.net = pSp()
        self.n_iters_per_batch = n_iters_per_batch
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)
        self.avg_image = self.net(self.net.latent_avg.unsqueeze(0), average_code=True)[0][0]

    def calc_loss(self, y, y_hat):
        return F.mse_loss(y_hat, y)

    def perform_train_iteration_on_batch(self, x, y):
        y_hat, latent = None, None
        for iter in range(self.n_iters_per_batch):
            if iter == 0:
                avg_image_for_batch = self.avg_image.unsqueeze(0).repeat(x.shape[0], 1, 1, 1)
                x_input = torch.cat([x, avg_image_for_batch], dim=1)
                y_hat, latent = self.net(x_input, latent=None)
            else:
                y_hat_clone = y_hat.clone().detach().requires_grad_(True)
                latent_clone = latent.clone().detach().requires_grad_(True)
                x_input = torch.cat([x, y_hat_clone], dim=1)
                y_hat, latent = self.net(x_input, latent=latent_clone)
            loss = self.calc_loss(y, y_hat)
            loss.backward()  # missed: ADL019
        return y_hat

    def train(self, loader):
        self.net.train()
        for x, y in loader:
            self.optimizer.zero_grad()
            self.perform_train_iteration_on_batch(x, y)
            self.optimizer.step()


def run():
    torch.manual_seed(0)
    Coach().train([(torch.rand(2, 3, 4, 4), torch.rand(2, 3, 4, 4)) for _ in range(2)])
