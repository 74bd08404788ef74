# message: jvp(f, primals, tangents): output of function f should be a tuple: (output, aux) if has_aux is
#   True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 25
# trigger: a trust-region probe in a class pushes a parameter direction through a policy with
#   torch.func.jvp over functional_call, with has_aux=True and three names unpacked; the log_probs
#   method it wraps used to return (log_probs, entropy) and now returns the log-probabilities alone
# source: none found; the pattern as users write it (an aux output refactored away)
# results: change
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))

    def forward(self, obs):
        return torch.log_softmax(self.net(obs), dim=-1)


class TrustRegionProbe:
    """How far the action log-probabilities move along a parameter direction (the quantity a
    natural-gradient step bounds). `log_probs` used to return (log_probs, entropy) for logging."""

    def __init__(self, policy):
        self.policy = policy
        self.params = {name: p.detach() for name, p in policy.named_parameters()}

    def log_probs(self, params, obs):
        return functional_call(self.policy, params, (obs,))

    def move(self, obs, direction):
        _, change = jvp(lambda params: self.log_probs(params, obs), (self.params,), (direction,))
        return change


torch.manual_seed(0)
policy = Policy()
probe = TrustRegionProbe(policy)
obs = torch.randn(5, 4)
direction = {name: torch.randn_like(p) for name, p in probe.params.items()}
change = probe.move(obs, direction)
