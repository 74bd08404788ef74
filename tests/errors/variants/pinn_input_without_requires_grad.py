# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# trigger: a physics-informed network takes du/dx with torch.autograd.grad, but the collocation
#   points x were made with linspace without requires_grad
# source: https://discuss.pytorch.org/t/efficient-calculation-of-derivatives-for-pinn-solvers-in-pytorch/177249
# results: loss, net
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
x = torch.linspace(0, 1, 8).reshape(-1, 1)  # PRIMARY
u = net(x)
du_dx = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
loss = ((du_dx - torch.cos(x)) ** 2).mean()
loss.backward()
