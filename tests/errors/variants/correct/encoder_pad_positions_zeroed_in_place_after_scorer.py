# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 23
# trigger: an attention-pooling classifier runs an nn.TransformerEncoder, scores every position with an
#   nn.Linear (which saves the encoder's output for its weight gradient), then zeroes the padded
#   positions of that output in place (h.mul_(keep)) before pooling with the scores
# source: none found; the pattern as users write it
# results: model.score.weight.grad, model.encoder.layers[0].linear1.weight.grad, pooled
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class PooledClassifier(nn.Module):
    def __init__(self, dim):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.score = nn.Linear(dim, 1)

    def forward(self, x, keep):
        h = self.encoder(x)
        scores = self.score(h).squeeze(-1).masked_fill(keep == 0, -1e9)
        h = h * keep.unsqueeze(-1)  # PRIMARY
        weights = torch.softmax(scores, dim=1)
        return (weights.unsqueeze(-1) * h).sum(1)


torch.manual_seed(0)
model = PooledClassifier(8)
x = torch.randn(2, 5, 8)
keep = torch.tensor([[1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
pooled = model(x, keep)
pooled.pow(2).sum().backward()
