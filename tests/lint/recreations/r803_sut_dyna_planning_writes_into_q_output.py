"""Deep_Reinforcement_Learning_SUT, CA15 notebook, the Dyna-Q agent's `planning_step`: for each
simulated transition it computes `current_q`, `next_q` and `target_q` under `torch.no_grad()`,
then evaluates `q_values = self.q_network(state_tensor.unsqueeze(0))` and writes the tabular
update into that output, `q_values[0, action] = current_q + 0.1 * td_error`.  The tensor is a
fresh forward's result, dropped at the end of the iteration: no loss is formed, nothing is
backpropagated and no optimizer steps, so the planning phase never changes the Q network (the
real-experience `update_q_function` is the only learning).
Re-created in my own words with the notebook's structure: `QNetwork`, a `ModelEnsemble` whose
`predict_mean(state, action)` gives the next state and reward, `store_experience`, the replay
`buffer`, and `planning_step(num_planning_steps)` recording the mean planning reward.
Nothing raises: `bug_shows()` shows the Q network's weights unchanged by fifty planning steps.
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/No%20Answer/CA15.ipynb"""
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cpu")


class QNetwork(nn.Module):
    def __init__(self, state_dim, action_dim, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, hidden)
        self.fc2 = nn.Linear(hidden, action_dim)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class ModelEnsemble(nn.Module):
    def __init__(self, state_dim, action_dim, n_models=3, hidden=32):
        super().__init__()
        self.action_dim = action_dim
        self.models = nn.ModuleList(
            [nn.Sequential(nn.Linear(state_dim + action_dim, hidden), nn.ReLU(), nn.Linear(hidden, state_dim + 1))
             for _ in range(n_models)])

    def predict_mean(self, state, action):
        one_hot = F.one_hot(action, self.action_dim).float().squeeze(0)
        out = torch.stack([m(torch.cat([state, one_hot])) for m in self.models]).mean(0)
        return out[:-1], out[-1]


class DynaQAgent:
    def __init__(self, state_dim, action_dim, lr=1e-3):
        self.action_dim = action_dim
        self.q_network = QNetwork(state_dim, action_dim).to(device)
        self.q_optimizer = torch.optim.Adam(self.q_network.parameters(), lr=lr)
        self.model_ensemble = ModelEnsemble(state_dim, action_dim)
        self.buffer = deque(maxlen=100000)
        self.training_stats = {"q_losses": [], "model_losses": [], "planning_rewards": []}

    def store_experience(self, state, action, reward, next_state, done):
        self.buffer.append((state, action, reward, next_state, done))

    def planning_step(self, num_planning_steps=50):
        if len(self.buffer) < 10:
            return 0
        total_planning_reward = 0
        for _ in range(num_planning_steps):
            state, _, _, _, _ = random.choice(self.buffer)
            state_tensor = torch.FloatTensor(state).to(device)
            action = np.random.randint(self.action_dim)
            action_tensor = torch.LongTensor([action]).to(device)
            next_state, reward = self.model_ensemble.predict_mean(state_tensor, action_tensor)
            with torch.no_grad():
                current_q = self.q_network(state_tensor.unsqueeze(0))[0, action]
                next_q = self.q_network(next_state.unsqueeze(0)).max()
                target_q = reward + 0.99 * next_q
            td_error = target_q - current_q
            q_values = self.q_network(state_tensor.unsqueeze(0))
            q_values[0, action] = current_q + 0.1 * td_error  # missed: no rule: a tabular update written into a discarded network output
            total_planning_reward += reward.item()
        avg_planning_reward = total_planning_reward / num_planning_steps
        self.training_stats["planning_rewards"].append(avg_planning_reward)
        return avg_planning_reward


def bug_shows():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    agent = DynaQAgent(4, 2)
    for _ in range(20):
        agent.store_experience(np.random.randn(4).astype(np.float32), 0, 1.0, np.random.randn(4).astype(np.float32), False)
    before = [p.detach().clone() for p in agent.q_network.parameters()]
    agent.planning_step(50)
    return all(torch.equal(b, p) for b, p in zip(before, agent.q_network.parameters()))
