"""Actor-critic as in SLM-Lab (REINFORCE, A2C, PPO and SIL share `calc_policy_loss`): the log
probabilities saved at each step of the episode are gathered with `torch.tensor(...)`, which copies
their values into a new tensor with no graph. The policy loss is then a constant as far as autograd
is concerned; the value loss keeps the total loss differentiable, so backward() and step() run
(PyTorch only warns "Converting a tensor with requires_grad=True to a scalar may lead to unexpected
behavior"), the critic trains, and the actor's head never changes.
Source: https://github.com/kengz/SLM-Lab/pull/133 ("Fix ActorCritic family": "REINFORCE and its
descendants are broken (AC, PPO, SIL). root cause: `torch.tensor` creates a brand new tensor detached
from the computation graph. So no gradient update was done. solution: use `torch.stack` instead").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_STATES, N_ACTIONS, EPISODE_LEN, GAMMA = 5, 2, 6, 0.9


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(N_STATES, 16), nn.ReLU())
        self.policy_head = nn.Linear(16, N_ACTIONS)
        self.value_head = nn.Linear(16, 1)

    def forward(self, state):
        hidden = self.body(state)
        return F.softmax(self.policy_head(hidden), dim=-1), self.value_head(hidden).squeeze(-1)


def one_hot(position):
    return F.one_hot(torch.tensor(position), N_STATES).float()


def run_episode(net, generator):
    position, log_probs, values, rewards = 0, [], [], []
    for t in range(EPISODE_LEN):
        probs, value = net(one_hot(position))
        action = torch.multinomial(probs.detach(), 1, generator=generator).item()
        log_probs.append(torch.log(probs[action]))
        values.append(value)
        position = min(position + 1, N_STATES - 1) if action == 1 else max(position - 1, 0)
        rewards.append(1.0 if position == N_STATES - 1 else 0.0)
    return log_probs, values, rewards


def calc_returns(rewards):
    returns, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + GAMMA * running
        returns.insert(0, running)
    return torch.tensor(returns)


def calc_policy_loss(saved_log_probs, advantages):
    log_probs = torch.stack(saved_log_probs)
    return -(log_probs * advantages).mean()


net = ActorCritic()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
generator = torch.Generator().manual_seed(0)

losses = []
for episode in range(5):
    saved_log_probs, saved_values, rewards = run_episode(net, generator)
    returns = calc_returns(rewards)
    values = torch.stack(saved_values)
    advantages = returns - values.detach()
    policy_loss = calc_policy_loss(saved_log_probs, advantages)
    value_loss = F.mse_loss(values, returns)
    loss = policy_loss + 0.5 * value_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in net.parameters()]}
