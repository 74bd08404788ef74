"""DQN with prioritized experience replay (BY571/DQN-Atari-Agents, Agents/dqn_agent.py
`learn_per`): the importance-sampling weighted TD loss was written
`loss = td_error.pow(2)*weights.mean().to(self.device)`. Without brackets `.mean()` applies to the
weights only, so the loss is a [batch_size, 1] tensor and `loss.backward()` raises "grad can be
implicitly created only for scalar outputs".
Source: https://github.com/BY571/DQN-Atari-Agents/issues/5 ("I think this should be
`loss = (td_error.pow(2)*weights).mean().to(self.device)` ... Without those brackets, loss is a
vector of shape [batch_size, 1] instead of a scalar"; fixed in commit 9ddff98).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
rng = np.random.default_rng(0)

STATE_DIM, ACTIONS, BATCH, CAPACITY, GAMMA, N_STEP, ALPHA, BETA, TAU = 4, 2, 8, 32, 0.99, 1, 0.6, 0.4, 1e-2


class PrioritizedReplay:
    def __init__(self):
        self.states = rng.standard_normal((CAPACITY, STATE_DIM)).astype(np.float32)
        self.next_states = rng.standard_normal((CAPACITY, STATE_DIM)).astype(np.float32)
        self.actions = rng.integers(0, ACTIONS, CAPACITY)
        self.rewards = rng.standard_normal(CAPACITY).astype(np.float32)
        self.dones = (rng.random(CAPACITY) < 0.1).astype(np.float32)
        self.priorities = np.ones(CAPACITY, dtype=np.float32)

    def sample(self):
        probs = self.priorities ** ALPHA / (self.priorities ** ALPHA).sum()
        idx = rng.choice(CAPACITY, BATCH, p=probs)
        weights = (CAPACITY * probs[idx]) ** (-BETA)
        weights = weights / weights.max()
        return (self.states[idx], self.actions[idx], self.rewards[idx], self.next_states[idx], self.dones[idx],
                idx, weights.astype(np.float32))

    def update_priorities(self, idx, td_errors):
        self.priorities[idx] = td_errors.reshape(-1) + 1e-5


class DQNAgent:
    def __init__(self):
        self.device = torch.device("cpu")
        self.qnetwork_local = nn.Sequential(nn.Linear(STATE_DIM, 16), nn.ReLU(), nn.Linear(16, ACTIONS))
        self.qnetwork_target = nn.Sequential(nn.Linear(STATE_DIM, 16), nn.ReLU(), nn.Linear(16, ACTIONS))
        self.qnetwork_target.load_state_dict(self.qnetwork_local.state_dict())
        self.optimizer = torch.optim.Adam(self.qnetwork_local.parameters(), lr=1e-3)
        self.memory = PrioritizedReplay()

    def soft_update(self, local_model, target_model):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(TAU * local_param.data + (1.0 - TAU) * target_param.data)

    def learn_per(self, experiences):
        self.optimizer.zero_grad()
        states, actions, rewards, next_states, dones, idx, weights = experiences
        states = torch.FloatTensor(states).to(self.device)
        next_states = torch.FloatTensor(np.float32(next_states)).to(self.device)
        actions = torch.LongTensor(actions).to(self.device).unsqueeze(1)
        rewards = torch.FloatTensor(rewards).to(self.device).unsqueeze(1)
        dones = torch.FloatTensor(dones).to(self.device).unsqueeze(1)
        weights = torch.FloatTensor(weights).unsqueeze(1).to(self.device)

        Q_targets_next = self.qnetwork_target(next_states).detach().max(1)[0].unsqueeze(1)
        Q_targets = rewards + (GAMMA ** N_STEP * Q_targets_next * (1 - dones))
        Q_expected = self.qnetwork_local(states).gather(1, actions)
        td_error = Q_targets - Q_expected
        loss = td_error.pow(2)*weights.mean().to(self.device)
        loss.backward()
        clip_grad_norm_(self.qnetwork_local.parameters(), 1)
        self.optimizer.step()

        self.soft_update(self.qnetwork_local, self.qnetwork_target)
        self.memory.update_priorities(idx, abs(td_error.data.cpu().numpy()))
        return loss.detach().cpu().numpy()


agent = DQNAgent()
losses = [torch.as_tensor(agent.learn_per(agent.memory.sample())) for step in range(3)]
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in agent.qnetwork_local.parameters()]}
