import torch
import torch.nn as nn

torch.manual_seed(0)
D = nn.Sequential(
    nn.Linear(12, 16),
    nn.LeakyReLU(0.2),
    nn.Dropout(0.3),
    nn.Linear(16, 1),
    nn.Sigmoid(),
)
x = torch.randn(4, 12)
D_loss = -torch.log(D(x)).mean()
D_loss.backward()
grads = [p.grad for p in D.parameters()]
