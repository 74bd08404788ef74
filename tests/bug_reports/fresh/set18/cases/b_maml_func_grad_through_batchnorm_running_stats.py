"""MAML written with `torch.func`: the inner step takes the support loss's gradient with
`torch.func.grad` over `functional_call(net, params, ...)`, and the query loss of the adapted
parameters is backpropagated to the meta-parameters. The few-shot network has a `BatchNorm1d`
layer that tracks running statistics (the default), and in training mode its forward updates
`running_mean`, `running_var` and `num_batches_tracked` in place. Under `torch.func.grad` those
buffers are tensors captured from outside the transformed function, and PyTorch raises "During a
grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place operation
(aten::add_.Tensor) that would mutate a captured Tensor".
Source: https://github.com/pytorch/functorch/issues/384 ("fix batch_norm in omniglot example":
the functorch MAML-Omniglot example fails with batch norm; the fix, pytorch/functorch#505, builds
the batch norm layers with `track_running_stats=False`, since the example never uses running
statistics; see also pytorch/pytorch#85533).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad

torch.manual_seed(0)

N_WAY, K_SHOT, QUERY, DIM, INNER_LR = 3, 4, 6, 8, 0.4

net = nn.Sequential(nn.Linear(DIM, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, N_WAY))
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
