"""MAML on few-shot sine regression with a functional network whose layers take the adapted
("fast") weights as a `params` dict. The layer-norm layer is legacy code: it always normalises
with its own `self.weight` and `self.bias` and ignores `params`. The inner loop takes its gradients
with allow_unused=True, so the adapted layer-norm weights are simply never used: the inner loop
does not adapt that layer and the meta-gradient misses its inner-loop path. Nothing raises.
Source: https://github.com/AntreasAntoniou/HowToTrainYourMAMLPytorch/issues/22 ("Why is
`self.weight` always used even if `params is not None`?"; the author: "Good catch. That block is
legacy code ... It should really be identical to how MetaBatchNorm works", i.e. use the weights in
params when they are given).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MetaLinear(nn.Linear):
    def forward(self, x, params=None):
        if params is None:
            return F.linear(x, self.weight, self.bias)
        return F.linear(x, params["weight"], params["bias"])


class MetaLayerNorm(nn.LayerNorm):
    def forward(self, x, params=None):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class MetaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = MetaLinear(1, 32)
        self.norm = MetaLayerNorm(32)
        self.fc2 = MetaLinear(32, 1)

    def forward(self, x, params=None):
        def sub(prefix):
            if params is None:
                return None
            return {name[len(prefix) + 1:]: value for name, value in params.items() if name.startswith(prefix + ".")}
        h = torch.tanh(self.norm(self.fc1(x, sub("fc1")), sub("norm")))
        return self.fc2(h, sub("fc2"))


def sine_task():
    amplitude, phase = torch.rand(1) * 4.0 + 0.1, torch.rand(1) * 3.14
    x = torch.rand(20, 1) * 10.0 - 5.0
    return x[:10], amplitude * torch.sin(x[:10] + phase), x[10:], amplitude * torch.sin(x[10:] + phase)


net = MetaNet()
meta_optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
query_losses = []
for outer_step in range(4):
    meta_optimizer.zero_grad()
    total = 0.0
    for task in range(3):
        x_support, y_support, x_query, y_query = sine_task()
        fast = dict(net.named_parameters())
        for inner_step in range(2):
            support_loss = F.mse_loss(net(x_support, fast), y_support)
            grads = torch.autograd.grad(support_loss, list(fast.values()), create_graph=True, allow_unused=True)
            fast = {name: (w if g is None else w - 0.01 * g) for (name, w), g in zip(fast.items(), grads)}
        total = total + F.mse_loss(net(x_query, fast), y_query)
    (total / 3).backward()
    meta_optimizer.step()
    query_losses.append(total.detach() / 3)

result = {"query_losses": torch.stack(query_losses),
          "norm_weight": net.norm.weight.detach().clone(), "fc1_weight": net.fc1.weight.detach().clone()}
