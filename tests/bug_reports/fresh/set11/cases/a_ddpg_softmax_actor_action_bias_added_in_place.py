"""DDPG with tianshou 0.2's `DDPGPolicy`, on an allocation task whose actor ends in a Softmax:
`forward` shifts the actor's output in place, `logits += self._action_bias` (and adds exploration
noise the same way), before clamping it to the action range. With the usual `tanh` head that
output is a fresh product, but a Softmax saves its own output for backward, so the actor's update
`actor_loss = -self.critic(batch.obs, self(batch, eps=0).act).mean(); actor_loss.backward()`
raises "one of the variables needed for gradient computation has been modified by an inplace
operation: [torch.FloatTensor [16, 3]], which is output 0 of SoftmaxBackward0".
Source: https://github.com/thu-ml/tianshou/issues/29 ("potential bug in the implementation of DDPG":
"when I added a Softmax layer to the Actor network, I'm getting an exception: RuntimeError: one of
the variables needed for gradient computation has been modified by an inplace operation"); the
correct version shifts and perturbs the output out of place.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS_DIM, ACT_DIM = 6, 3


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(OBS_DIM, 32), nn.ReLU(inplace=True), nn.Linear(32, ACT_DIM),
                                   nn.Softmax(dim=-1))

    def forward(self, s):
        return self.model(s), None


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(OBS_DIM + ACT_DIM, 32), nn.ReLU(inplace=True), nn.Linear(32, 1))

    def forward(self, s, a):
        return self.model(torch.cat([s, a], dim=1))


class DDPGPolicy:
    def __init__(self, actor, critic, action_range=(-1.0, 1.0), gamma=0.9, exploration_noise=0.1):
        self.actor, self.critic = actor, critic
        self.actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)
        self._range = action_range
        self._action_bias = (action_range[0] + action_range[1]) / 2
        self._gamma, self._eps = gamma, exploration_noise

    def forward(self, obs, eps=None):
        logits, h = self.actor(obs)
        logits += self._action_bias
        if eps is None:
            eps = self._eps
        if eps > 0:
            logits += torch.randn(size=logits.shape) * eps
        logits = logits.clamp(self._range[0], self._range[1])
        return logits

    def learn(self, obs, act, rew, obs_next):
        with torch.no_grad():
            target_q = rew + self._gamma * self.critic(obs_next, self.forward(obs_next, eps=0))
        current_q = self.critic(obs, act)
        critic_loss = F.mse_loss(current_q, target_q)
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()
        actor_loss = -self.critic(obs, self.forward(obs, eps=0)).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return critic_loss.detach(), actor_loss.detach()


policy = DDPGPolicy(Actor(), Critic())

obs, obs_next = torch.randn(16, OBS_DIM), torch.randn(16, OBS_DIM)
act = policy.forward(obs).detach()
rew = torch.randn(16, 1)

losses = [policy.learn(obs, act, rew, obs_next) for _ in range(4)]

result = {"losses": losses, "actor": [p.detach().clone() for p in policy.actor.parameters()],
          "critic": [p.detach().clone() for p in policy.critic.parameters()]}
