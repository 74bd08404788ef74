# message: vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is
#   True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 15
# trigger: a helper returns [output, aux] as a list (the JSON habit) to torch.func.jacrev with
#   has_aux=True
# source: none found; the pattern as users write it
# results: jac, aux
import torch
from torch import nn
from torch.func import jacrev

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(3, 4), nn.Tanh())


def encode(x):
    z = encoder(x)
    return [z, z.norm()]  # PRIMARY


x = torch.randn(3)
jac, aux = jacrev(encode, has_aux=True)(x)
