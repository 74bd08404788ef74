# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 2
# trigger: an input-gradient penalty (R1 regularisation) takes the real images out of a
#   (images, labels) batch and asks torch.autograd.grad for their gradient
# source: none found; the pattern as users write it
# results: penalty, critic
import torch
from torch import nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
batch = (torch.randn(5, 4), torch.randint(0, 2, (5,)))
real = batch[0].requires_grad_()  # PRIMARY
scores = critic(real)
(grad_real,) = torch.autograd.grad(scores.sum(), real, create_graph=True)
penalty = grad_real.pow(2).sum(1).mean()
penalty.backward()
