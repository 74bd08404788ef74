"""A multi-task model trained with a Muon-style optimizer (momentum, Newton-Schulz orthogonalised
update, decoupled weight decay). During this phase only the first task's head is used, so the second
head's weights get no gradient (`p.grad is None`). The optimizer's step does not skip them: it sets
`p.grad = torch.zeros_like(p)` ("force synchronization"), and then applies the weight decay,
`p.mul_(1 - lr * weight_decay)`, to every parameter. The head that was not trained shrinks step by
step and nothing raises (KellerJordan/Muon#54, "optimizer applies weight decay to parameters even
when their gradient is None"). The change is the usual optimizer rule: a parameter whose gradient
is None is skipped (`continue`), as torch.optim's optimizers do.
Source: https://github.com/KellerJordan/Muon/issues/54
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def zeropower_via_newtonschulz5(G, steps=5):
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.float()
    if G.size(-2) > G.size(-1):
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def muon_update(grad, momentum, beta=0.95):
    momentum.lerp_(grad, 1 - beta)
    update = grad.lerp_(momentum, beta)
    update = zeropower_via_newtonschulz5(update)
    update *= max(1, grad.size(-2) / grad.size(-1)) ** 0.5
    return update


class SingleDeviceMuon(torch.optim.Optimizer):
    def __init__(self, params, lr=0.02, weight_decay=0.1, momentum=0.95):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["momentum_buffer"] = torch.zeros_like(p)
                update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(update.reshape(p.shape), alpha=-group["lr"])


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16, bias=False)
        self.head_a = nn.Linear(16, 4, bias=False)
        self.head_b = nn.Linear(16, 4, bias=False)

    def forward(self, x, task):
        h = torch.relu(self.trunk(x))
        return self.head_a(h) if task == "a" else self.head_b(h)


model = MultiTask()
optimizer = SingleDeviceMuon(model.parameters(), lr=0.05, weight_decay=0.5)
x = torch.randn(16, 8)
y = torch.randn(16, 4)

losses = []
for step in range(5):
    optimizer.zero_grad()
    loss = ((model(x, "a") - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().clone())

result = {"losses": torch.stack(losses),
          "params": {name: p.detach().clone() for name, p in model.named_parameters()}}
