"""PAAC.pytorch (Parallel Advantage Actor-Critic) logs the mean loss every
few updates from `loss_sum`, to which the trainer adds each update's loss
tensor after stepping.  "loss_sum is added by Variable, its related memory is
not freed.  loss_sum should be added by variable.data[0]": every update's
graph stays alive until the log line resets the sum.  Nothing raises.
Buggy line: `loss_sum += loss` in `PAACTrainer.train`.
Source: https://github.com/qbx2/PAAC.pytorch/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, n_obs=4, n_actions=3):
        super().__init__()
        self.body = nn.Linear(n_obs, 16)
        self.pi = nn.Linear(16, n_actions)
        self.v = nn.Linear(16, 1)

    def forward(self, x):
        h = F.relu(self.body(x))
        return self.pi(h), self.v(h)


class PAACTrainer:
    def __init__(self, model, n_envs=4, t_max=3, gamma=0.99, lr=7e-4, log_interval=2):
        self.model = model
        self.n_envs = n_envs
        self.t_max = t_max
        self.gamma = gamma
        self.log_interval = log_interval
        self.optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
        self.logged = []

    def rollout(self, states):
        log_probs, values, entropies, rewards = [], [], [], []
        for t in range(self.t_max):
            logits, value = self.model(states)
            probs = F.softmax(logits, -1)
            log_prob = F.log_softmax(logits, -1)
            action = probs.multinomial(1)
            log_probs.append(log_prob.gather(1, action))
            entropies.append(-(log_prob * probs).sum(1, keepdim=True))
            values.append(value)
            rewards.append(torch.randn(self.n_envs, 1))
            states = torch.randn(self.n_envs, states.size(1))
        return log_probs, values, entropies, rewards, states

    def train(self, n_updates=4):
        states = torch.randn(self.n_envs, 4)
        loss_sum = 0
        for step in range(1, n_updates + 1):
            log_probs, values, entropies, rewards, states = self.rollout(states)
            with torch.no_grad():
                R = self.model(states)[1]
            policy_loss = value_loss = 0
            for t in reversed(range(self.t_max)):
                R = rewards[t] + self.gamma * R
                advantage = R - values[t]
                policy_loss = policy_loss - (log_probs[t] * advantage.detach()).mean() - 0.01 * entropies[t].mean()
                value_loss = value_loss + advantage.pow(2).mean()
            loss = policy_loss + 0.5 * value_loss
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 40.0)
            self.optimizer.step()
            loss_sum += loss  # missed: ADL023
            if step % self.log_interval == 0:
                self.logged.append(loss_sum / self.log_interval)
                loss_sum = 0


def bug_shows():
    """The logged mean holds the updates' graphs."""
    torch.manual_seed(0)
    trainer = PAACTrainer(ActorCritic())
    trainer.train()
    return trainer.logged[0].grad_fn is not None
