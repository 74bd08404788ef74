# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss, grad_inside_no_grad_block)
# trigger: a set-up helper called at the start of the script turns gradients off globally with
#   torch.set_grad_enabled(False) (left from an evaluation script); training fails later
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn
import torch.nn.functional as F


def setup(seed):
    torch.manual_seed(seed)
    torch.set_grad_enabled(False)  # PRIMARY


def train_step(model, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    return loss


setup(0)
model = nn.Linear(3, 1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = train_step(model, x, y)
