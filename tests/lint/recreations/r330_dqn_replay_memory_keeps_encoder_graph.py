"""CompNet recommends medications with a DQN whose state comes from two CNN
encoders of the patient record and a graph encoder of the drugs chosen so
far.  The agent pushes that state into its replay memory as computed, with
the encoders' graph attached, and `replay()` concatenates a sampled batch of
stored states, runs `loss.backward(retain_graph=True)` and `optimizer.step()`
(the optimizer also holds the encoders' weights).  The next replay samples
states stored before that step: its backward pass goes through their old
graph, whose saved encoder weights the step changed in place ("one of the
variables needed for gradient computation has been modified by an inplace
operation").  The fix stores detached states (or the raw inputs, encoding
them again at replay time).
Buggy line: `self.optimizer.step()` in `Agent.replay`, after which stored
states still carry graphs that saved the old weights.
Expected finding: ADL003 there (a step between building a graph and a
backward pass through it).
Source: https://github.com/WOW5678/CompNet/issues/2"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class RecordEncoder(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, codes):
        return self.out(torch.tanh(self.embedding(codes).mean(0, keepdim=True)))


class QNetwork(nn.Module):
    def __init__(self, dim=8, actions=5):
        super().__init__()
        self.W = nn.Parameter(torch.randn(dim, dim) * 0.1)
        self.fc = nn.Linear(dim, actions)

    def forward(self, x):
        state = torch.sigmoid(torch.mm(x, self.W))
        return self.fc(state)


class Agent:
    def __init__(self, gamma=0.9):
        self.encoder = RecordEncoder()
        self.model = QNetwork()
        params = list(self.encoder.parameters()) + list(self.model.parameters())
        self.optimizer = torch.optim.Adam(params, lr=1e-2)
        self.memory = []
        self.gamma = gamma

    def observe(self, codes):
        return self.encoder(codes)

    def remember(self, state, action, reward, next_state):
        self.memory.append((state, action, reward, next_state))

    def replay(self, batch_size=2):
        batch = random.sample(self.memory, batch_size)
        states = torch.cat([s for s, _, _, _ in batch], 0)
        actions = torch.tensor([[a] for _, a, _, _ in batch])
        rewards = torch.tensor([r for _, _, r, _ in batch])
        next_states = torch.cat([n for _, _, _, n in batch], 0)
        q_eval = self.model(states).gather(1, actions)
        q_next = self.model(next_states).detach()
        q_target = (rewards + self.gamma * q_next.max(1)[0]).unsqueeze(1)
        loss = F.mse_loss(q_eval, q_target)
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()  # missed: ADL003
        return loss.item()


def run():
    torch.manual_seed(0)
    random.seed(0)
    agent = Agent()
    records = [torch.randint(0, 20, (6,)) for _ in range(3)]
    for i in range(3):
        state = agent.observe(records[i])
        next_state = agent.observe(records[(i + 1) % 3])
        agent.remember(state, i % 5, 1.0, next_state)
    for _ in range(3):
        agent.replay()
