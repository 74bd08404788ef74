"""A model whose forward computes one branch under `with torch.no_grad():` (`y = self.l1(x)`,
meant as a constant offset) and returns `self.l2(x) + y`. The reporter computes the input
Jacobian through `torch.func.functional_call` and finds that `jacrev` and `jacfwd` disagree:
forward-mode AD is not turned off by `no_grad`, so `jacfwd` differentiates through the branch
the user froze, and nothing warns. Here the Jacobian (by `jacfwd`, the cheaper mode for this
shape) enters a Jacobian-norm penalty in training, so the penalty and every update are computed
on the wrong Jacobian. The workaround given in the report: `y = self.l1(x).detach()` inside the
`no_grad` block, after which both modes agree.
Source: https://github.com/pytorch/pytorch/issues/128600
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 34)
        self.l2 = nn.Linear(8, 34)

    def forward(self, x):
        with torch.no_grad():
            y = self.l1(x)
        return self.l2(x) + y


m = Model()
optimizer = torch.optim.SGD(m.l2.parameters(), lr=0.01)


def f(x):
    return torch.func.functional_call(m, dict(m.named_parameters()), x)


losses, jac_norms = [], []
for step in range(10):
    x = torch.randn(1, 8)
    target = torch.randn(1, 34)
    jac = torch.func.jacfwd(f)(x)
    penalty = jac.pow(2).sum()
    loss = (f(x) - target).pow(2).mean() + 0.01 * penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    jac_norms.append(penalty.detach())

result = {"losses": torch.stack(losses), "jac_norms": torch.stack(jac_norms),
          "params": [p.detach().clone() for p in m.parameters()]}
