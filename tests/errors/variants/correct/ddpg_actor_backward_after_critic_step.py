# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [8, 1]], which is output 0 of AsStrided, is at version 2; expected
#   version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute
#   its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD103 (catalogue: saved_tensor_modified; AD103 is the recorder's code for a write made by
#   optimizer.step())
# set: 16
# trigger: a DDPG-style update evaluates the critic on the replay batch's states with the actor's
#   actions once, steps the critic's optimizer on its TD loss, then backpropagates the actor's loss
#   (minus the critic's value of the same forward) through the critic weights just stepped
# source: none found; the pattern as users write it (the actor loss computed before the critic update)
# results: actor, critic
import torch
from torch import nn


class Agent:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.actor_opt = torch.optim.SGD(self.actor.parameters(), lr=0.05)
        self.critic_opt = torch.optim.SGD(self.critic.parameters(), lr=0.05)

    def update(self, states, actions, targets):
        q_taken = self.critic(torch.cat([states, actions], 1))
        critic_loss = (q_taken - targets).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        q_policy = self.critic(torch.cat([states, self.actor(states)], 1))  # PRIMARY
        actor_loss = -q_policy.mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()


torch.manual_seed(0)
agent = Agent()
for _ in range(3):
    states, actions, targets = torch.randn(16, 3), torch.rand(16, 1) * 2 - 1, torch.randn(16, 1)
    agent.update(states, actions, targets)
actor, critic = agent.actor, agent.critic
