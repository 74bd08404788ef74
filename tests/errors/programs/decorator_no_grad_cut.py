import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)


@torch.no_grad()  # PRIMARY
def predict(batch):
    return model(batch)


loss = predict(torch.randn(4, 3)).pow(2).mean()
loss.backward()  # RAISES
