# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open
#   an issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 21
# trigger: a sequence encoder checkpoints its nn.TransformerEncoderLayer (non-reentrant
#   torch.utils.checkpoint.checkpoint in forward); an input-attribution script takes a
#   vector-Jacobian product with torch.func.vjp through torch.func.functional_call
# source: none found; the pattern as users write it (activation checkpointing left on for analysis)
# results: attribution, output
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, vjp
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        h = self.layer(x)  # PRIMARY
        return self.head(h).squeeze(-1)


torch.manual_seed(0)
model = Encoder()
params = {name: p.detach() for name, p in model.named_parameters()}
tokens = torch.randn(2, 5, 8)
output, pullback = vjp(lambda t: functional_call(model, params, (t,)), tokens)
(attribution,) = pullback(torch.ones_like(output))
