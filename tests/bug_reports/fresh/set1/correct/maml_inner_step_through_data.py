"""MAML: the inner (adaptation) step writes through `param.data`, so the query loss has no path
back to the meta-parameters and the meta-model never trains (no error).
Source: https://github.com/KanishJebaMathewM/Truxify/issues/13118 (fix: functional fast weights).
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
meta_opt = torch.optim.SGD(model.parameters(), lr=0.1)
support_x, support_y = torch.randn(5, 3), torch.randn(5, 1)
query_x, query_y = torch.randn(5, 3), torch.randn(5, 1)
inner_lr = 0.1

meta_opt.zero_grad()
inner_loss = F.mse_loss(model(support_x), support_y)
grads = torch.autograd.grad(inner_loss, model.parameters(), create_graph=True)
fast = {name: param - inner_lr * grad for (name, param), grad in zip(model.named_parameters(), grads)}
query_loss = F.mse_loss(torch.func.functional_call(model, fast, (query_x,)), query_y)
query_loss.backward()
meta_opt.step()
result = {"query_loss": query_loss.detach(), "params": [p.detach() for p in model.parameters()]}
