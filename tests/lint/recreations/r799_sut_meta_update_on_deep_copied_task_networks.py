"""Deep_Reinforcement_Learning_SUT, CA04 `agents/multi_agent_systems.py`, `MetaLearningAgent`:
`adapt_to_task` makes `task_network = copy.deepcopy(self.meta_network)`, runs the inner-loop
steps on it with its own `task_optimizer`, and keeps it in `self.task_networks[task_id]`.
`meta_update` then sums `_calculate_task_loss(self.task_networks[task_id], ...)` over the tasks
into `meta_loss`, calls `meta_loss.backward()` and `self.meta_optimizer.step()`; but
`meta_optimizer` holds `self.meta_network.parameters()`, which the copies do not share: the loss
reaches only the task networks, every meta parameter's `.grad` stays `None`, and the meta step
changes nothing.  The meta network, from which every task starts, never learns.
Re-created in my own words with the module's structure: the meta policy network, `adapt_to_task`
with `num_inner_steps`, `_calculate_task_loss` (discounted returns times log probabilities of the
taken actions), and `meta_update(task_results)`, on experiences made up of random states.
Nothing raises: `bug_shows()` shows the meta network's weights unchanged after a meta update.
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/Solutions/CA04_Policy_Gradient_Methods/agents/multi_agent_systems.py"""
import copy
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class MetaLearningAgent:
    def __init__(self, state_size, action_size, meta_lr=1e-3, inner_lr=1e-2, num_inner_steps=3, gamma=0.99):
        self.gamma = gamma
        self.inner_lr = inner_lr
        self.num_inner_steps = num_inner_steps
        self.meta_network = nn.Sequential(
            nn.Linear(state_size, 32), nn.ReLU(), nn.Linear(32, action_size)
        )
        self.meta_optimizer = optim.Adam(self.meta_network.parameters(), lr=meta_lr)
        self.task_networks = {}

    def adapt_to_task(self, task_id, task_experiences):
        task_network = copy.deepcopy(self.meta_network)
        task_optimizer = optim.Adam(task_network.parameters(), lr=self.inner_lr)
        for step in range(self.num_inner_steps):
            if not task_experiences:
                break
            batch = random.sample(task_experiences, min(32, len(task_experiences)))
            loss = self._calculate_task_loss(task_network, batch)
            task_optimizer.zero_grad()
            loss.backward()
            task_optimizer.step()
        self.task_networks[task_id] = task_network
        return task_network

    def _calculate_task_loss(self, network, experiences):
        states = torch.FloatTensor([exp["state"] for exp in experiences])
        actions = torch.LongTensor([exp["action"] for exp in experiences])
        rewards = torch.FloatTensor([exp["reward"] for exp in experiences])
        returns = []
        G = 0
        for reward in reversed(rewards):
            G = reward + self.gamma * G
            returns.insert(0, G)
        returns = torch.FloatTensor(returns)
        log_probs = F.log_softmax(network(states), dim=-1)
        selected_log_probs = log_probs.gather(1, actions.unsqueeze(1)).squeeze()
        return -(selected_log_probs * returns).mean()

    def meta_update(self, task_results):
        meta_loss = 0
        for task_result in task_results:
            task_id = task_result["task_id"]
            if task_id in self.task_networks:
                loss = self._calculate_task_loss(self.task_networks[task_id], task_result["experiences"])
                meta_loss += loss
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        self.meta_optimizer.step()  # missed: no rule: the loss reaches only deep copies of the optimizer's network


def make_experiences(n=8):
    return [{"state": [random.random() for _ in range(4)], "action": random.randrange(2),
             "reward": 1.0 + random.random()} for _ in range(n)]


def bug_shows():
    random.seed(0)
    torch.manual_seed(0)
    agent = MetaLearningAgent(4, 2)
    before = [p.detach().clone() for p in agent.meta_network.parameters()]
    task_results = []
    for task_id in ("left", "right"):
        experiences = make_experiences()
        agent.adapt_to_task(task_id, experiences)
        task_results.append({"task_id": task_id, "experiences": experiences})
    agent.meta_update(task_results)
    return all(torch.equal(b, p) for b, p in zip(before, agent.meta_network.parameters()))
