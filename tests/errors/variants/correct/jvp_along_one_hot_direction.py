# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 15
# trigger: the partial derivatives of a model along each input coordinate are taken with
#   torch.func.jvp, the coordinate direction built with F.one_hot (int64) and expanded to the batch
# source: none found; the pattern as users write it (one-hot basis vectors as tangents)
# results: partials
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import jvp

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
x = torch.randn(5, 3)
partials = []
for i in range(3):
    direction = F.one_hot(torch.tensor(i), 3).to(x.dtype).expand(5, 3)  # PRIMARY
    _, partial = jvp(model, (x,), (direction,))
    partials.append(partial)
