"""DNA_RL (actor-critic for DNA sequence design), `a2c.py`: at each step `update_step` estimates
V(s') and V(s) with the critic, forms `td_target = reward + discount_factor * next_state_value`
and `td_error = td_target - current_state_value`, lets the actor update on `td_error`, and then
calls `self.critic.update(current_state_value, td_target)`, whose loss is
`MSELoss(current_state_value, td_target)`.  `td_target` is never detached: the critic's
backward also moves V(s') towards V(s) - a residual-gradient update instead of the TD(0)
semi-gradient the algorithm means.  Nothing raises.
Re-created in my own words with the repository's structure: `A2C` with `episode_init`,
`update`, `update_step`, `update_end` and its `policy`, the convolutional `Critic` with
`estimate_state` and `update`, and the recurrent `Actor` that emits one action per action
dimension and updates with `loss.backward(retain_graph=True)`.
`bug_shows()` compares the critic's gradient with the one of the same loss on a detached
target.
Buggy line: `td_target = reward + self.discount_factor * next_state_value`.
Source: https://github.com/BenoitLeguay/DNA_RL/blob/07730adfcd4519a12c61f51378e37571c73b0da8/a2c.py"""
import copy

import numpy as np
import torch
from torch import nn


def to_tensor(x):
    return torch.tensor(np.asarray(x), dtype=torch.float32)


class Critic(torch.nn.Module):
    def __init__(self, critic_init):
        super(Critic, self).__init__()
        network_init = critic_init['network']
        self.relu = nn.ReLU(inplace=False)
        self.conv1 = nn.Sequential(nn.ConstantPad1d(3 // 2, 0.25), nn.Conv1d(4, 8, 3), nn.LeakyReLU(0.1),
                                   nn.AdaptiveMaxPool1d(1))
        self.l1 = nn.Linear(network_init["i_size"], network_init["l1_size"])
        self.l2 = nn.Linear(network_init["l1_size"], network_init["l2_size"])
        self.o = nn.Linear(network_init["l2_size"], 1)
        self.optimizer = None
        self.loss = torch.nn.MSELoss()
        self.loss_history = list()

    def init_optimizer(self, optimizer_args):
        self.optimizer = torch.optim.Adam(self.parameters(), **optimizer_args)

    def forward(self, x):
        x = self.conv1(x).squeeze(dim=2)
        x = self.relu(self.l1(x))
        x = self.relu(self.l2(x))
        return self.o(x)

    def estimate_state(self, state):
        return self(state)

    def update(self, current_state_value, td_target):
        loss = self.loss(current_state_value, td_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.loss_history.append(loss.item())


class Actor(torch.nn.Module):
    def __init__(self, actor_init):
        super(Actor, self).__init__()
        network_init = actor_init['network']
        self.action_dim = actor_init['action_dim']
        self.entropy_learning_rate = actor_init['entropy_learning_rate']
        self.optimizer = None
        self.loss_history = list()
        self.hidden_size = network_init["hidden_size"]
        self.relu = nn.ReLU()
        self.conv1 = nn.Sequential(nn.ConstantPad1d(3 // 2, 0.25), nn.Conv1d(4, 8, 3), nn.LeakyReLU(0.1),
                                   nn.AdaptiveMaxPool1d(1))
        self.l1 = nn.Linear(network_init["i_size"] + self.hidden_size, network_init["l1_size"])
        self.l1_to_h = nn.Linear(network_init["l1_size"], self.hidden_size)
        self.l1_to_o = nn.Linear(network_init["l1_size"], network_init["o_size"])
        self.softmax = nn.Softmax(dim=1)

    def init_optimizer(self, optimizer_args):
        self.optimizer = torch.optim.Adam(self.parameters(), **optimizer_args)

    def forward(self, x, hidden):
        x = self.conv1(x).squeeze(dim=2)
        combined = torch.cat((x, hidden), 1)
        l1_out = self.relu(self.l1(combined))
        hidden = self.relu(self.l1_to_h(l1_out))
        output = self.softmax(self.relu(self.l1_to_o(l1_out)))
        return output, hidden

    def rnn_forward(self, x):
        hidden = torch.empty(x.shape[0], self.hidden_size).fill_(0)
        outputs = list()
        for _ in range(self.action_dim):
            output, hidden = self(x, hidden)
            outputs.append(output)
        return torch.stack(outputs, dim=0).squeeze(dim=1)

    def predict_action(self, state):
        action_probabilities = self.rnn_forward(state)
        return torch.distributions.Categorical(probs=action_probabilities).sample()

    def update(self, state, action, td_error):
        actions_probabilities = self.rnn_forward(state)
        action_chosen_prob = torch.gather(actions_probabilities, dim=1, index=action.unsqueeze(dim=1))
        sum_entropy = torch.distributions.Categorical(probs=actions_probabilities).entropy().sum()
        loss = -torch.log(action_chosen_prob.prod()) * td_error - self.entropy_learning_rate * sum_entropy
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()
        self.loss_history.append(loss.item())


class A2C:
    def __init__(self, init_a2c):
        self.discount_factor = init_a2c["discount_factor"]
        self.critic = Critic(init_a2c['critic'])
        self.actor = Actor(init_a2c['actor'])
        self.next_state = None
        self.next_action = None
        self.critic.init_optimizer(init_a2c['critic']['optimizer'])
        self.actor.init_optimizer(init_a2c['actor']['optimizer'])

    def policy(self, state):
        with torch.no_grad():
            action = self.actor.predict_action(state)
        return action

    def episode_init(self, state):
        state = to_tensor(state).view((1, ) + state.shape)
        action = self.policy(state)
        self.next_action = action
        self.next_state = state
        return action.numpy()

    def update(self, state, reward, done):
        state = to_tensor(state).view((1, ) + state.shape)
        next_action = -1
        if not done:
            next_action = self.update_step(state, reward)
        if done:
            self.update_end(reward)
        return next_action

    def update_step(self, next_state, reward):
        current_action = self.next_action
        current_state = self.next_state

        next_state_value = self.critic.estimate_state(next_state)
        current_state_value = self.critic.estimate_state(current_state)

        td_target = reward + self.discount_factor * next_state_value  # missed: ADL032 (the TD loss, its backward and its step are in another class's method, Critic.update)
        td_error = td_target - current_state_value

        self.actor.update(current_state, current_action, td_error)
        self.critic.update(current_state_value, td_target)

        next_action = self.policy(next_state)
        self.next_state = next_state
        self.next_action = next_action
        return next_action.numpy()

    def update_end(self, reward):
        current_action = self.next_action
        current_state = self.next_state
        current_state_value = self.critic.estimate_state(current_state)
        td_target = to_tensor([[float(reward)]])
        td_error = td_target - current_state_value
        self.actor.update(current_state, current_action, td_error)
        self.critic.update(current_state_value, td_target)


INIT = {
    "discount_factor": 0.9,
    "critic": {"network": {"i_size": 8, "l1_size": 8, "l2_size": 8}, "optimizer": {"lr": 1e-3}},
    "actor": {"network": {"i_size": 8, "hidden_size": 4, "l1_size": 8, "o_size": 3}, "action_dim": 3,
              "entropy_learning_rate": 0.01, "optimizer": {"lr": 1e-3}},
}


def one_hot_sequence(rng, length=6):
    return np.eye(4, dtype=np.float32)[rng.integers(4, size=length)].T  # (4 nucleotides, length)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    agent = A2C(INIT)
    agent.episode_init(one_hot_sequence(rng))
    for step in range(3):
        agent.update(one_hot_sequence(rng), reward=float(step), done=step == 2)
    return agent


def bug_shows():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    critic = Critic(INIT["critic"])
    critic.init_optimizer({"lr": 0.0})
    state = to_tensor(one_hot_sequence(rng)).unsqueeze(0)
    next_state = to_tensor(one_hot_sequence(rng)).unsqueeze(0)
    reference = copy.deepcopy(critic)

    td_target = 1.0 + 0.9 * critic.estimate_state(next_state)
    critic.update(critic.estimate_state(state), td_target)

    detached_target = 1.0 + 0.9 * reference.estimate_state(next_state).detach()
    reference.loss(reference.estimate_state(state), detached_target).backward()
    return not torch.allclose(critic.l1.weight.grad, reference.l1.weight.grad)
