"""Compiled inference (CSIS, as in Pyro's `pyro.infer.csis`): the inference network is trained on
traces drawn from the model's prior, and each particle's gradients are taken with
`torch.autograd.grad(particle_loss, guide_params, allow_unused=True)` and accumulated by hand into
`.grad`. The model has stochastic control flow: the second latent exists only in some traces, so
for the other traces the gradients of its proposal's parameters are None, and
`guide_param.grad + guide_grad` raises "TypeError: unsupported operand type(s) for +: 'Tensor' and
'NoneType'" as soon as an earlier particle has set that `.grad`.
Source: https://github.com/pyro-ppl/pyro/issues/2827 ("[bug] CSIS error when parameters are not
fully used"; fix: https://github.com/pyro-ppl/pyro/pull/2828, skip the parameters whose gradient
is None).
expect: raises"""
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


class InferenceNetwork(nn.Module):
    """Proposals for the latents given the observation."""

    def __init__(self):
        super().__init__()
        self.z1_proposal = nn.Linear(1, 2)
        self.z2_proposal = nn.Linear(2, 2)

    def log_prob(self, obs, trace):
        loc, log_scale = self.z1_proposal(obs).unbind(-1)
        total = Normal(loc, log_scale.exp()).log_prob(trace["z1"])
        if "z2" in trace:
            loc2, log_scale2 = self.z2_proposal(torch.stack([obs[0], trace["z1"]])).unbind(-1)
            total = total + Normal(loc2, log_scale2.exp()).log_prob(trace["z2"])
        return total


def sample_prior_trace(generator):
    z1 = torch.randn((), generator=generator)
    trace = {"z1": z1}
    if z1 > 0:
        trace["z2"] = z1 + torch.randn((), generator=generator)
    obs = (trace.get("z2", z1) + 0.1 * torch.randn((), generator=generator)).reshape(1)
    return trace, obs


guide = InferenceNetwork()
guide_params = list(guide.parameters())
optimizer = torch.optim.Adam(guide_params, lr=1e-2)
generator = torch.Generator().manual_seed(3)
losses = []
for step in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = 0.0
    for particle in range(6):
        trace, obs = sample_prior_trace(generator)
        particle_loss = -guide.log_prob(obs, trace) / 6
        guide_grads = torch.autograd.grad(particle_loss, guide_params, allow_unused=True)
        for guide_grad, guide_param in zip(guide_grads, guide_params):
            guide_param.grad = guide_grad if guide_param.grad is None else guide_param.grad + guide_grad
        loss += particle_loss.item()
    optimizer.step()
    losses.append(torch.tensor(loss))
result = {"losses": losses, "params": [p.detach().clone() for p in guide_params]}
