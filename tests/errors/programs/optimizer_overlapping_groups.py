import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x)))


torch.manual_seed(0)
model = Net()
# the head should learn with a smaller learning rate than the rest
opt = torch.optim.SGD([{"params": model.parameters()}, {"params": model.head.parameters(), "lr": 0.01}], lr=0.1)  # PRIMARY
x = torch.randn(8, 3)
loss = model(x).pow(2).mean()
loss.backward()
opt.step()
