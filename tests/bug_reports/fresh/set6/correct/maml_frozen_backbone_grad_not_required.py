"""Few-shot classification with MAML on a pretrained, frozen feature extractor: the inner loop
differentiates the support loss with respect to every parameter of the model, including the
frozen ones (`requires_grad=False`).
Source: https://github.com/learnables/learn2learn/issues/92 ("One of the differentiated Tensors
does not require grad" when adapting the learner; learn2learn's answer for partly frozen models is
`MAML(..., allow_nograd=True)`, which differentiates only the parameters that require grad).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(12, 32), nn.ReLU())
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.features(x))


model = Learner()
for p in model.features.parameters():
    p.requires_grad_(False)
meta_opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)


def adapt(model, support_x, support_y, inner_lr=0.4, steps=2):
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    for _ in range(steps):
        loss = F.cross_entropy(functional_call(model, params, (support_x,)), support_y)
        names = list(params)
        grads = torch.autograd.grad(loss, [params[n] for n in names], create_graph=True)
        params = {n: params[n] - inner_lr * g for n, g in zip(names, grads)}
    return params


losses = []
for task in range(3):
    sx, sy = torch.randn(10, 12), torch.arange(10) % 5
    qx, qy = torch.randn(10, 12), torch.arange(10) % 5
    adapted = adapt(model, sx, sy)
    query_loss = F.cross_entropy(functional_call(model, adapted, (qx,)), qy)
    meta_opt.zero_grad()
    query_loss.backward()
    meta_opt.step()
    losses.append(query_loss.detach())
result = {"losses": losses, "head": [p.detach().clone() for p in model.head.parameters()]}
