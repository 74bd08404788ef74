"""MAML with torch.func over a batch norm layer that keeps no running statistics (batch statistics
only, as in training mode).
Source: https://github.com/pytorch/functorch/issues/384."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad

torch.manual_seed(0)

N_WAY, K_SHOT, QUERY, DIM, INNER_LR = 3, 4, 6, 8, 0.4

net = nn.Sequential(nn.Linear(DIM, 32), nn.BatchNorm1d(32, track_running_stats=False), nn.ReLU(), nn.Linear(32, N_WAY))
meta_optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
centers = torch.randn(N_WAY, DIM) * 2


def make_task():
    shift = torch.randn(1, DIM)
    labels = torch.arange(N_WAY)
    support_y = labels.repeat_interleave(K_SHOT)
    query_y = labels.repeat_interleave(QUERY)
    support_x = centers[support_y] + shift + torch.randn(len(support_y), DIM)
    query_x = centers[query_y] + shift + torch.randn(len(query_y), DIM)
    return support_x, support_y, query_x, query_y


def support_loss(params, x, y):
    return F.cross_entropy(functional_call(net, params, (x,)), y)


meta_losses = []
for meta_step in range(8):
    params = dict(net.named_parameters())
    meta_loss = 0.0
    for task in range(2):
        support_x, support_y, query_x, query_y = make_task()
        grads = grad(support_loss)(params, support_x, support_y)
        adapted = {name: value - INNER_LR * grads[name] for name, value in params.items()}
        meta_loss = meta_loss + F.cross_entropy(functional_call(net, adapted, (query_x,)), query_y)
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()
    meta_losses.append(meta_loss.detach())

result = {"meta_losses": torch.stack(meta_losses), "params": [p.detach().clone() for p in net.parameters()]}
