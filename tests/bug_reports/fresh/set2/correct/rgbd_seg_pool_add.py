"""RGB-D segmentation: the global-pool context is added in place, `out += pool`, to a ReLU output
that ReLU saved.
Source: https://github.com/charlesCXK/RGBD_Semantic_Segmentation_PyTorch/issues/9 (answer: write
`a = a + b` instead of `a += b`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
conv = nn.Conv2d(4, 4, 3, padding=1)
classifier = nn.Conv2d(4, 3, 1)
rgbd = torch.randn(2, 4, 6, 6)

out = torch.relu(conv(rgbd))
pool = out.mean((2, 3), keepdim=True)
out = out + pool
logits = classifier(out)
loss = logits.pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in (*conv.parameters(), *classifier.parameters())]}
