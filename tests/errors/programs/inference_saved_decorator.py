import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Linear(4, 4)
head = nn.Linear(4, 1)


@torch.inference_mode()
def embed(batch):
    return backbone(batch)


features = embed(torch.randn(8, 4))  # PRIMARY
loss = head(features).pow(2).mean()  # RAISES
loss.backward()
