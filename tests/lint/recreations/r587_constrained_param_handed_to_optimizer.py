"""A Pyro forum thread: a parameter declared with a constraint
(`param("mu", tensor(0.), constraint=greater_than(0))`) is returned as the
constrained value, a differentiable transform of the unconstrained tensor
that is really optimized; handing it to `torch.optim.Adam` fails with
"can't optimize a non-leaf Tensor".  Re-created without Pyro, in the
thread's shape: a small `ParamStore` that keeps the unconstrained leaf and
returns `softplus(raw) + lower`, the conditioned model's negative log
probability, and the thread's `Adam([param("mu")])` loop.  Raises when the
optimizer is built.
Buggy line: `optimizer = torch.optim.Adam([param("mu")], lr=0.01)` (the
constrained, non-leaf value handed to the optimizer).
Source: https://forum.pyro.ai/t/try-to-understand-param-with-constraints/4761"""
import torch
import torch.nn.functional as F
from torch.distributions import Normal


class ParamStore:
    def __init__(self):
        self._raw, self._lower = {}, {}

    def param(self, name, init=None, lower=None):
        if name not in self._raw:
            if lower is None:
                self._raw[name] = init.clone().requires_grad_()
            else:
                shifted = (init - lower).clamp_min(1e-3)
                self._raw[name] = torch.log(torch.expm1(shifted)).requires_grad_()
            self._lower[name] = lower
        raw = self._raw[name]
        if self._lower[name] is None:
            return raw
        return F.softplus(raw) + self._lower[name]


STORE = ParamStore()


def param(name, init=None, lower=None):
    return STORE.param(name, init, lower)


def model(x_obs):
    mu = param("mu", torch.tensor(0.5), lower=0.0)
    return Normal(mu, 1.0).log_prob(x_obs)


def run():
    model(torch.tensor(5.0))  # instantiate the mu parameter
    optimizer = torch.optim.Adam([param("mu")], lr=0.01)  # missed: no rule (non-leaf tensor handed to an optimizer)
    mus, losses = [], []
    for _ in range(10):
        prob = -model(torch.tensor(5.0))
        prob.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(prob.item())
        mus.append(param("mu").item())
