# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 23
# trigger: a MAML-style meta-learner adapts a small MLP whose nn.LayerNorm was frozen
#   (layer[1].requires_grad_(False)); the inner step asks torch.autograd.grad(...,
#   create_graph=True) for the gradient of every tensor in list(layer.parameters())
# source: none found; the pattern as users write it
# results: meta_loss, layer[0].weight.grad, layer[3].weight.grad
import os
import sys

import torch
from torch import nn
from torch.func import functional_call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class MetaLearner:
    def __init__(self, layer, inner_lr):
        self.layer = layer
        self.inner_lr = inner_lr

    def adapt(self, x, y):
        names, params = zip(*self.layer.named_parameters())
        loss = (functional_call(self.layer, dict(zip(names, params)), (x,)) - y).pow(2).mean()
        grads = torch.autograd.grad(loss, params, create_graph=True)  # PRIMARY
        return {name: p - self.inner_lr * g for name, p, g in zip(names, params, grads)}


torch.manual_seed(0)
layer = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 8))
layer[1].requires_grad_(False)
learner = MetaLearner(layer, 0.1)
support, query = torch.randn(2, 3, 8), torch.randn(2, 3, 8)
adapted = learner.adapt(support, support.flip(1))
meta_loss = (functional_call(layer, adapted, (query,)) - query.flip(1)).pow(2).mean()
meta_loss.backward()
