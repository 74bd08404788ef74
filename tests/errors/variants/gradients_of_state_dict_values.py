# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 9
# trigger: a sharpness (SAM-like) probe asks torch.autograd.grad for the gradient with respect to
#   the tensors of model.state_dict(), which are detached from the parameters
# source: none found; the pattern as users write it (state_dict() taken for the parameters)
# results: gradient_norm, model
import torch
from torch import nn
import torch.nn.functional as F


def gradient_norm(model, x, y):
    weights = list(model.state_dict().values())  # PRIMARY
    loss = F.mse_loss(model(x), y)
    gradients = torch.autograd.grad(loss, weights)
    return torch.stack([g.norm() for g in gradients]).norm()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x, y = torch.randn(6, 3), torch.randn(6, 1)
gradient_norm = gradient_norm(model, x, y)
