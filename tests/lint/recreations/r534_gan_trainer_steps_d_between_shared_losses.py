"""A Chinese blog post on the in-place error in GAN training: the generator's
sample `g = G(t)` and the discriminator's score `d = D(g)` are computed once,
and both losses are built from them.  `lossD.backward(retain_graph=True)`
keeps the graph, `optimD.step()` then updates D's weights in place, and
`lossG.backward()` runs back through D again: "one of the variables needed
for gradient computation has been modified by an inplace operation", because
D's parameters saved by the forward pass are no longer at the version the
graph recorded.  (The post's fix: compute lossG after the step with a fresh
`D(g)`, or step D only after both backwards.)
Buggy line: `self.optimD.step()` before `lossG.backward()`.
Source: https://blog.csdn.net/odbej/article/details/125158288"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz=4, nx=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, nx), nn.Tanh())

    def forward(self, t):
        return self.net(t)


class Discriminator(nn.Module):
    def __init__(self, nx=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nx, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class GANTrainer:
    def __init__(self, nz=4, nx=6, lr=2e-4):
        self.nz = nz
        self.G = Generator(nz, nx)
        self.D = Discriminator(nx)
        self.optimG = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.optimD = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))
        self.criterion = nn.BCELoss()

    def train_step(self, real):
        n = real.size(0)
        ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
        t = torch.randn(n, self.nz)
        g = self.G(t)
        d = self.D(g)
        lossD = self.criterion(self.D(real), ones) + self.criterion(d, zeros)
        lossG = self.criterion(d, ones)

        self.optimD.zero_grad()
        lossD.backward(retain_graph=True)
        self.optimD.step()  # expect: ADL003

        self.optimG.zero_grad()
        lossG.backward()
        self.optimG.step()
        return lossD.item(), lossG.item()

    def fit(self, data, epochs=1, batch=4):
        for epoch in range(epochs):
            for i in range(0, data.size(0), batch):
                self.train_step(data[i:i + batch])


def run():
    torch.manual_seed(0)
    GANTrainer().fit(torch.rand(8, 6) * 2 - 1)
