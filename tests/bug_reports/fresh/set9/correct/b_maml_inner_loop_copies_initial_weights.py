"""Unrolled MAML inner loop that starts from detached copies of the weights: the model gets no meta-gradient.
Source: https://github.com/facebookresearch/higher/issues/69 (copy_initial_weights=False)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class InnerLoop:
    """Unrolled, differentiable SGD on a functional copy of `model` (what higher's
    `innerloop_ctx` yields as `fmodel, diffopt`)."""

    def __init__(self, model, lr, copy_initial_weights=True):
        self.model, self.lr = model, lr
        self.params = {
            name: p.detach().clone().requires_grad_() if copy_initial_weights else p
            for name, p in model.named_parameters()
        }

    def __call__(self, x):
        return functional_call(self.model, self.params, (x,))

    def step(self, loss):
        grads = torch.autograd.grad(loss, list(self.params.values()), create_graph=True)
        self.params = {name: p - self.lr * g for (name, p), g in zip(self.params.items(), grads)}


model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
tasks = []
for _ in range(4):
    w = torch.randn(4, 1)
    x_spt, x_qry = torch.randn(8, 4), torch.randn(8, 4)
    tasks.append((x_spt, x_spt @ w, x_qry, x_qry @ w))
query_losses = []
for epoch in range(3):
    meta_opt.zero_grad()
    for x_spt, y_spt, x_qry, y_qry in tasks:
        fmodel = InnerLoop(model, lr=0.1, copy_initial_weights=False)
        for _ in range(2):
            fmodel.step(F.mse_loss(fmodel(x_spt), y_spt))
        qry_loss = F.mse_loss(fmodel(x_qry), y_qry)
        qry_loss.backward()
        query_losses.append(qry_loss.detach())
    meta_opt.step()
result = {"query_losses": query_losses, "params": [p.detach().clone() for p in model.parameters()]}
