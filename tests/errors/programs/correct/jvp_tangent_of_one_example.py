"""torch.func.jvp of a model on a batch, with the direction given for one example (shape [3])
rather than for the batch ([4, 3]); forward-mode AD needs a tangent of each primal's own size. The
pattern as users write it (directional derivatives of a batched function)."""
import torch
from torch.func import jvp

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
batch = torch.randn(4, 3)
direction = torch.tensor([1.0, 0.0, 0.0])

out, directional = jvp(model, (batch,), (direction.expand_as(batch),))
