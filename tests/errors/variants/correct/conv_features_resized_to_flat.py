# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 5
# trigger: a small CNN's forward flattens its convolution features with resize_ (as in old Lua
#   Torch code) before the linear classifier
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.fc = nn.Linear(2 * 4 * 4, 3)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = x.reshape(x.size(0), x.numel() // x.size(0))  # PRIMARY
        return self.fc(x)


torch.manual_seed(0)
model = TinyCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images, labels = torch.randn(3, 1, 4, 4), torch.tensor([0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
