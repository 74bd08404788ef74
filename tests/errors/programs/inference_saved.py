import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Linear(4, 4)
head = nn.Linear(4, 1)
x = torch.randn(8, 4)
with torch.inference_mode():  # PRIMARY
    features = backbone(x)
loss = head(features).pow(2).mean()  # RAISES
loss.backward()
