"""Actor-critic on Pong (ucla-rlcourse/RLexample, policygradient/ac-pong-pytorch.py): one network
with an action head and a value head; the one-step advantage `reward - value` multiplies the log
probability in the policy loss without being detached, so the policy-gradient term also pushes on
the value head (and the shared layer) through `value`. Nothing is raised; the critic is trained
by a term that is not its regression loss.
Source: https://github.com/ucla-rlcourse/RLexample/issues/12 ("Policy loss computes gradients for
value network"; fixed by the reporter in PR #13, commit 0fee432: `advantage = advantage.detach()`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)

OBS, GAMMA = 6, 0.99


class AC(nn.Module):
    def __init__(self, num_actions=2):
        super().__init__()
        self.affine1 = nn.Linear(OBS, 16)
        self.action_head = nn.Linear(16, num_actions)
        self.value_head = nn.Linear(16, 1)
        self.saved_log_probs, self.rewards = [], []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)

    def select_action(self, x):
        probs, state_value = self(x.unsqueeze(0))
        m = Categorical(probs)
        action = m.sample()
        self.saved_log_probs[-1].append((m.log_prob(action), state_value))
        return action.item()


policy = AC()
optimizer = torch.optim.RMSprop(policy.parameters(), lr=1e-3)
env_generator = torch.Generator().manual_seed(1)


def finish_episode():
    policy_loss, value_loss, returns = [], [], []
    for episode_id, episode_rewards in enumerate(policy.rewards):
        for i, r in enumerate(episode_rewards):
            if i == len(episode_rewards) - 1:
                R = torch.scalar_tensor(r)
            else:
                R = r + GAMMA * policy.saved_log_probs[episode_id][i + 1][1]
            returns.append(R)
    flat = [sample for episode in policy.saved_log_probs for sample in episode]
    for (log_prob, value), reward in zip(flat, returns):
        advantage = reward - value  # A(s,a) = r + gamma V(s_t+1) - V(s_t)
        advantage = advantage.detach()
        policy_loss.append(-log_prob * advantage)
        value_loss.append(F.smooth_l1_loss(value.reshape(-1), reward.reshape(-1)))
    optimizer.zero_grad()
    loss = torch.stack(policy_loss).sum() + 0.5 * torch.stack(value_loss).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), 10.0)
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return loss.detach()


losses = []
for i_episode in range(1, 7):
    policy.rewards.append([])
    policy.saved_log_probs.append([])
    state = torch.randn(OBS, generator=env_generator)
    for t in range(5):
        action = policy.select_action(state)
        reward = 1.0 if (state[action] > 0) else -1.0  # a toy paddle: reward depends on the move
        policy.rewards[-1].append(reward)
        state = torch.randn(OBS, generator=env_generator)
    if i_episode % 2 == 0:
        losses.append(finish_episode())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in policy.parameters()]}
