"""Spiking CNN trained through time: the leaky integrate-and-fire layer keeps its membrane
potential on the module between calls and the training loop never resets it, so the second batch
starts from a potential whose graph the first `backward()` freed.
Source: https://github.com/jeshraghian/snntorch/issues/250 ("Trying to backward through the graph
a second time"; solved by resetting the hidden states of all neurons at the start of forward,
`utils.reset(self.net)`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Leaky(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold
        self.mem = None

    def reset(self):
        self.mem = None

    def forward(self, current):
        if self.mem is None:
            self.mem = torch.zeros_like(current)
        self.mem = self.beta * self.mem + current
        spike = torch.sigmoid(5 * (self.mem - self.threshold))
        self.mem = self.mem - spike * self.threshold
        return spike, self.mem


class SpikingNet(nn.Module):
    def __init__(self, num_steps=5):
        super().__init__()
        self.num_steps = num_steps
        self.fc1, self.lif1 = nn.Linear(20, 32), Leaky()
        self.fc2, self.lif2 = nn.Linear(32, 3), Leaky()

    def forward(self, x):
        mem_rec = []
        for _ in range(self.num_steps):
            spk, _ = self.lif1(self.fc1(x))
            _, mem = self.lif2(self.fc2(spk))
            mem_rec.append(mem)
        return torch.stack(mem_rec)


net = SpikingNet()
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)
losses = []
for step in range(3):
    x, y = torch.randn(16, 20), torch.randint(0, 3, (16,))
    mem_rec = net(x)
    loss = sum(F.cross_entropy(m, y) for m in mem_rec)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in net.parameters()]}
