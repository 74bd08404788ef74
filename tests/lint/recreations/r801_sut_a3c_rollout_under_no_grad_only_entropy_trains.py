"""Deep_Reinforcement_Learning_SUT, CA12 notebook, `A3CWorker.train_step`: the worker copies the
global weights into `local_model`, then collects `n_steps` transitions with the whole forward
under `torch.no_grad()`, keeping `log_prob` (no graph) and `value.item()`.  The update rebuilds
`values = torch.FloatTensor(values)` and `log_probs = torch.stack(log_probs)`, so
`actor_loss = -(log_probs * advantages.detach()).mean()` and
`critic_loss = F.mse_loss(values, returns)` are constants; only the entropy term, from a fresh
`self.local_model(states)`, has a graph.  `total_loss.backward()` runs, the gradients are
handed to the global model and the optimizer steps, but the actor's logits are only pushed
towards uniform and the value head gets no gradient at all: neither learns from its loss.
Re-created in my own words with the notebook's structure: an actor-critic network returning
`(logits, value)`, `A3CWorker` with `compute_n_step_returns`, `train_step` (rollout, bootstrap
under `no_grad`, losses, gradient hand-over `global_param.grad = local_param.grad`, step), on a
small stand-in environment.  The hand-over's `local_param.grad.clone()` is guarded here for the
value head, whose gradient is `None` (in the notebook that line itself fails with an
`AttributeError`, the first visible symptom of the same cut).
Nothing raises: `bug_shows()` shows the global value head unchanged after several updates.
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/No%20Answer/CA12.ipynb"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, action_dim=2, hidden=32):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.policy_head = nn.Linear(hidden, action_dim)
        self.value_head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.shared(x)
        return self.policy_head(h), self.value_head(h)


class StandInEnv:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def reset(self):
        self.t = 0
        return self.rng.normal(size=4).astype(np.float32)

    def step(self, action):
        self.t += 1
        return self.rng.normal(size=4).astype(np.float32), float(action), self.t >= 8, {}


class A3CWorker:
    def __init__(self, worker_id, global_model, local_model, env_fn, gamma=0.99, n_steps=5):
        self.worker_id = worker_id
        self.global_model = global_model
        self.local_model = local_model
        self.env = env_fn()
        self.gamma = gamma
        self.n_steps = n_steps
        self.optimizer = optim.Adam(global_model.parameters(), lr=1e-3)

    def compute_n_step_returns(self, rewards, values, next_value, dones):
        returns = []
        R = next_value
        for i in reversed(range(len(rewards))):
            R = rewards[i] + self.gamma * R * (1 - dones[i])
            returns.insert(0, R)
        return returns

    def train_step(self):
        self.local_model.load_state_dict(self.global_model.state_dict())
        states, actions, rewards, values, log_probs, dones = [], [], [], [], [], []
        state = self.env.reset()
        for _ in range(self.n_steps):
            state_tensor = torch.FloatTensor(state).unsqueeze(0)
            with torch.no_grad():
                logits, value = self.local_model(state_tensor)
                probs = F.softmax(logits, dim=-1)
                dist = Categorical(probs)
                action = dist.sample()
                log_prob = dist.log_prob(action)
            next_state, reward, done, _ = self.env.step(action.item())
            states.append(state)
            actions.append(action)
            rewards.append(reward)
            values.append(value.item())
            log_probs.append(log_prob)
            dones.append(done)
            state = next_state if not done else self.env.reset()
            if done:
                break
        with torch.no_grad():
            if done:
                next_value = 0
            else:
                _, next_value = self.local_model(torch.FloatTensor(state).unsqueeze(0))
                next_value = next_value.item()
        returns = self.compute_n_step_returns(rewards, values, next_value, dones)
        states = torch.FloatTensor(np.array(states))
        returns = torch.FloatTensor(returns)
        values = torch.FloatTensor(values)
        log_probs = torch.stack(log_probs)
        advantages = returns - values
        actor_loss = -(log_probs * advantages.detach()).mean()
        critic_loss = F.mse_loss(values, returns)  # missed: ADL034/ADL009, a partial cut: the entropy term keeps a graph
        logits, _ = self.local_model(states)
        probs = F.softmax(logits, dim=-1)
        entropy = -(probs * torch.log(probs + 1e-8)).sum(-1).mean()
        total_loss = actor_loss + 0.5 * critic_loss - 0.01 * entropy
        self.optimizer.zero_grad()
        total_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.local_model.parameters(), 40)
        for global_param, local_param in zip(self.global_model.parameters(), self.local_model.parameters()):
            if global_param.grad is not None:
                global_param.grad = local_param.grad
            else:
                global_param.grad = local_param.grad.clone() if local_param.grad is not None else None
        self.optimizer.step()
        return total_loss.item()


def bug_shows():
    torch.manual_seed(0)
    global_model = ActorCritic()
    worker = A3CWorker(0, global_model, ActorCritic(), StandInEnv)
    before = [p.detach().clone() for p in global_model.value_head.parameters()]
    for _ in range(3):
        worker.train_step()
    return all(torch.equal(b, p) for b, p in zip(before, global_model.value_head.parameters()))
