"""A discriminator with LeakyReLU(inplace=True) followed by Dropout(inplace=True): the dropout
overwrites the output the LeakyReLU saved.
Source: https://github.com/dreamgonfly/GAN-tutorial/issues/1 (answer: remove inplace=True from
LeakyReLU and Dropout)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
D = nn.Sequential(
    nn.Linear(12, 16),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Dropout(0.3, inplace=True),  # PRIMARY
    nn.Linear(16, 1),
    nn.Sigmoid(),
)
x = torch.randn(4, 12)
D_loss = -torch.log(D(x)).mean()
D_loss.backward()
grads = [p.grad for p in D.parameters()]
