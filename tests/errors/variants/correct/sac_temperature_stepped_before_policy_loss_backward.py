# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor []] is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute
#   its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD103 (catalogue: saved_tensor_modified; AD103 is the recorder's code for a write made by
#   optimizer.step())
# set: 26
# trigger: a soft actor-critic agent keeps its temperature as softplus(raw_alpha); update() samples
#   the policy once and builds the policy loss and the temperature loss from the same alpha, then
#   steps the temperature's optimizer (alpha loss backward with retain_graph=True) before the policy
#   loss's backward(), which needs raw_alpha as softplus saved it
# source: none found; the pattern as users write it (SAC with automatic entropy tuning, both losses
#   computed from one sample before the two updates)
# results: policy, raw_alpha
import torch
from torch import nn
import torch.nn.functional as F


class SoftActorCritic:
    def __init__(self, state_size=3, action_size=1):
        self.policy = nn.Sequential(nn.Linear(state_size, 16), nn.Tanh(), nn.Linear(16, 2 * action_size))
        self.q = nn.Sequential(nn.Linear(state_size + action_size, 16), nn.ReLU(), nn.Linear(16, 1))
        self.raw_alpha = nn.Parameter(torch.zeros(()))
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.alpha_opt = torch.optim.Adam([self.raw_alpha], lr=1e-2)
        self.target_entropy = -float(action_size)

    def sample(self, states):
        mean, log_std = self.policy(states).chunk(2, dim=-1)
        log_std = log_std.clamp(-5.0, 2.0)
        noise = torch.randn_like(mean)
        action = torch.tanh(mean + log_std.exp() * noise)
        log_prob = (-0.5 * noise.pow(2) - log_std).sum(-1) - torch.log(1 - action.pow(2) + 1e-6).sum(-1)
        return action, log_prob

    def update(self, states):
        action, log_prob = self.sample(states)
        alpha = F.softplus(self.raw_alpha)
        q_value = self.q(torch.cat([states, action], dim=-1)).squeeze(-1)
        policy_loss = (alpha.detach() * log_prob - q_value).mean()  # PRIMARY
        alpha_loss = -(alpha * (log_prob.detach() + self.target_entropy)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward(retain_graph=True)
        self.alpha_opt.step()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()


torch.manual_seed(0)
agent = SoftActorCritic()
for _ in range(3):
    agent.update(torch.randn(32, 3))
policy, raw_alpha = agent.policy, agent.raw_alpha
