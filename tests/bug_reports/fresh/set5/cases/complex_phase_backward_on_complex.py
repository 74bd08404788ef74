"""Speech enhancement with magnitude and phase: the network predicts a magnitude and a phase, the
complex spectrum is built as `mag * torch.exp(1j * phase)` (the construction in
https://github.com/pytorch/pytorch/issues/43349), and the loss is the mean squared complex error,
which is itself complex; `backward()` refuses a complex output.
Source: https://github.com/pytorch/pytorch/issues/104514 ("Complex autograd:"; answer: "The
gradient is only mathematically defined for functions onto the real numbers. Your function takes
complex values, hence the error."; a real loss, e.g. the squared magnitude of the error, is the
change).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(8, 16)
noisy = torch.randn(4, 8)
clean = torch.randn(4, 8, dtype=torch.complex64)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)

losses = []
for step in range(3):
    out = net(noisy)
    mag, phase = torch.relu(out[:, :8]), out[:, 8:]
    estimate = mag * torch.exp(1j * phase)
    loss = ((estimate - clean) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in net.parameters()]}
