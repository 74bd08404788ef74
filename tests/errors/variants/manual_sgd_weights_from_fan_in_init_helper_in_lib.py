# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 21
# trigger: a from-scratch MLP gets its weights from a helper in another file that returns
#   torch.randn(fan_in, fan_out, requires_grad=True) / math.sqrt(fan_in) (a computed tensor, not a
#   leaf); the hand-written SGD update reads p.grad, which is None
# source: none found; the pattern as users write it (from-scratch training loops)
# helpers: lib_fan_in_init.py
# results: params, losses
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_fan_in_init import init_weight  # noqa: E402

torch.manual_seed(0)
params = [init_weight(4, 8), torch.zeros(8, requires_grad=True), init_weight(8, 1)]
lr = 0.1
losses = []
for _ in range(3):
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    w1, b1, w2 = params
    loss = ((torch.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    losses.append(loss.detach())
