"""distributed-dag-offloading-caching (DRL for DAG task offloading and caching), `a2c.py`: the
A2C learner samples a batch from its memory, runs the shared-trunk model (policy head with a
temperature softmax, value head) on the states and on the next states, and forms
`advantages = rewards + gamma * next_values * (1 - dones) - values`.  Neither the bootstrap
`next_values` nor the advantages are detached: `value_loss = mean(advantages ** 2)`
backpropagates into V(s') as well as V(s) (the target moves with the prediction), and
`policy_loss = -mean(log_prob(a) * advantages)` trains the value head and the shared trunk
through the advantage.  Nothing raises; the value head gets a different gradient than the
TD(0) update it means.
Re-created in my own words with the repository's structure: `MyModel` (hidden layers, policy
and value heads, optional favoured-action bias), `A2C` with its dict-of-lists memory,
`predict`/`get_action`/`add_experience`/`train`/`decay_temperature`, and the `A2C_Agent`
wrapper with `observe` and `replay`.
`bug_shows()` compares the value head's gradient with the one of the same loss whose bootstrap
target and advantages are detached.
Buggy line: `advantages = rewards + self.gamma * next_values * (1 - dones) - values`.
Source: https://github.com/MR-Golzari/distributed-dag-offloading-caching/blob/869ec510cab9d3df6480e051f97689488f9f8d0c/a2c.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class MyModel(nn.Module):
    def __init__(self, num_states, hidden_units, num_actions, favored_action=None, bias_value=2.0):
        super(MyModel, self).__init__()
        layers = []
        input_dim = num_states
        for hidden_dim in hidden_units:
            layers.append(nn.Linear(input_dim, hidden_dim))
            layers.append(nn.Tanh())
            input_dim = hidden_dim
        self.hidden_layers = nn.Sequential(*layers)
        self.policy_layer = nn.Linear(input_dim, num_actions)
        self.value_layer = nn.Linear(input_dim, 1)
        if favored_action is not None:
            with torch.no_grad():
                self.policy_layer.bias[favored_action] = bias_value

    def forward(self, state, temperature):
        x = self.hidden_layers(state)
        logits = self.policy_layer(x)
        policy = torch.softmax(logits / temperature, dim=-1)
        value = self.value_layer(x)
        return policy, value


class A2C:
    def __init__(self, num_states, num_actions, hidden_units, gamma, max_experiences, min_experiences,
                 batch_size, lr, favored_action=None):
        self.num_actions = num_actions
        self.gamma = gamma
        self.model = MyModel(num_states, hidden_units, num_actions, favored_action=favored_action)
        self.optimizer = optim.Adam(self.model.parameters(), lr=lr)
        self.memory = {'s': [], 'a': [], 'r': [], 's2': [], 'done': []}
        self.max_experiences = max_experiences
        self.min_experiences = min_experiences
        self.batch_size = batch_size
        self.temperature = 1.0
        self.temperature_decay = 0.9995
        self.min_temperature = 0.01

    def predict(self, state):
        state = torch.tensor(state, dtype=torch.float32)
        return self.model(state, temperature=self.temperature)

    def get_action(self, state):
        policy_probs, _ = self.predict(state)
        return torch.multinomial(policy_probs, 1).item()

    def add_experience(self, exp):
        if len(self.memory['s']) >= self.max_experiences:
            for key in self.memory.keys():
                self.memory[key].pop(0)
        for key, value in exp.items():
            self.memory[key].append(value)

    def decay_temperature(self):
        self.temperature = max(self.min_temperature, self.temperature * self.temperature_decay)

    def train(self):
        if len(self.memory['s']) < self.min_experiences:
            return

        ids = np.random.choice(len(self.memory['s']), self.batch_size, replace=False)
        states = torch.stack([torch.tensor(self.memory['s'][i], dtype=torch.float32) for i in ids])
        actions = torch.tensor([self.memory['a'][i] for i in ids], dtype=torch.long)
        rewards = torch.tensor([self.memory['r'][i] for i in ids], dtype=torch.float32).view(-1, 1)
        states_next = torch.stack([torch.tensor(self.memory['s2'][i], dtype=torch.float32) for i in ids])
        dones = torch.tensor([self.memory['done'][i] for i in ids], dtype=torch.float32).view(-1, 1)

        # Use temperature in forward pass
        policy_probs, values = self.predict(states)
        _, next_values = self.predict(states_next)

        advantages = rewards + self.gamma * next_values * (1 - dones) - values  # missed: ADL032 (the bootstrap value comes through a helper method, self.predict, and is set against the prediction inside the target expression itself)

        log_probs = torch.log(policy_probs + 1e-10)
        action_masks = torch.nn.functional.one_hot(actions, self.num_actions)
        policy_loss = -torch.mean((log_probs * action_masks).sum(dim=1).view(-1, 1) * advantages)
        value_loss = torch.mean(advantages.pow(2))

        loss = policy_loss + value_loss

        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

        self.decay_temperature()


class A2C_Agent:
    def __init__(self, num_states, num_actions, hidden_units, gamma, max_experiences, min_experiences,
                 batch_size, lr, epsilon, maximum_exploration, favored_action=None):
        self.TrainNet = A2C(num_states, num_actions, hidden_units, gamma, max_experiences, min_experiences,
                            batch_size, lr, favored_action=favored_action)
        self.epsilon = epsilon
        self.decay = epsilon ** (1.0 / maximum_exploration)

    def observe(self, observation):
        exp = {'s': observation[0], 'a': observation[1], 'r': observation[2], 's2': observation[3],
               'done': observation[4]}
        self.TrainNet.add_experience(exp)

    def replay(self):
        self.TrainNet.train()


def make_agent():
    torch.manual_seed(0)
    np.random.seed(0)
    agent = A2C_Agent(num_states=4, num_actions=3, hidden_units=[8], gamma=0.9, max_experiences=32,
                      min_experiences=4, batch_size=4, lr=1e-3, epsilon=0.99, maximum_exploration=100)
    rng = np.random.default_rng(0)
    for _ in range(6):
        agent.observe((rng.random(4), int(rng.integers(3)), float(rng.random()), rng.random(4), False))
    return agent


def run():
    agent = make_agent()
    for _ in range(3):
        agent.replay()


def bug_shows():
    learner = make_agent().TrainNet
    for group in learner.optimizer.param_groups:
        group["lr"] = 0.0  # keep the weights: only the gradient of one train() call is compared
    np.random.seed(1)
    learner.train()
    buggy = learner.model.value_layer.weight.grad.clone()

    # the same batch, with the bootstrap target and the advantages cut from the graph
    np.random.seed(1)
    ids = np.random.choice(len(learner.memory['s']), learner.batch_size, replace=False)
    learner.model.zero_grad()
    states = torch.stack([torch.tensor(learner.memory['s'][i], dtype=torch.float32) for i in ids])
    actions = torch.tensor([learner.memory['a'][i] for i in ids], dtype=torch.long)
    rewards = torch.tensor([learner.memory['r'][i] for i in ids], dtype=torch.float32).view(-1, 1)
    states_next = torch.stack([torch.tensor(learner.memory['s2'][i], dtype=torch.float32) for i in ids])
    policy_probs, values = learner.model(states, temperature=1.0)
    with torch.no_grad():
        _, next_values = learner.model(states_next, temperature=1.0)
    targets = rewards + learner.gamma * next_values
    log_probs = torch.log(policy_probs + 1e-10)
    chosen = (log_probs * torch.nn.functional.one_hot(actions, learner.num_actions)).sum(dim=1).view(-1, 1)
    loss = -torch.mean(chosen * (targets - values).detach()) + torch.mean((targets - values).pow(2))
    loss.backward()
    return not torch.allclose(buggy, learner.model.value_layer.weight.grad)
