"""A one-step actor-critic on a cart-pole-like task (a tutorial port of a TensorFlow example):
at every environment step `critic.learn(s, r, s_)` computes the TD error
`r + GAMMA * V(s_) - V(s)`, backpropagates its square (retain_graph=True), steps the critic's
Adam optimizer and returns the TD error; `actor.learn(s, a, td_error)` then weights the action's
log-probability by it. The returned TD error still carries the critic's graph, so the actor's
backward() also runs into the critic's layers, whose weights the critic's step() has just
changed in place: it raises "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [20, 1]] ...,
is at version 2; expected version 1 instead".
Source: https://github.com/ClownW/Reinforcement-learning-with-PyTorch/issues/1 ("RuntimeError
about AC_CartPole.py"; the TD error is a fixed weight for the actor, as in the TensorFlow
original where it is fed as a number: the actor's loss uses `td.detach()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)

N_F, N_A, GAMMA, EPISODES, MAX_STEPS = 4, 2, 0.9, 2, 12


class Net(nn.Module):
    def __init__(self, n_feature, n_hidden, n_output, activate=False):
        super().__init__()
        self.l1 = nn.Linear(n_feature, n_hidden)
        self.out = nn.Linear(n_hidden, n_output)
        self.activate = activate

    def forward(self, x):
        x = self.out(F.relu(self.l1(x)))
        return F.softmax(x, dim=1) if self.activate else x


class Actor:
    def __init__(self):
        self.actor_net = Net(N_F, 20, N_A, activate=True)
        self.optimizer = torch.optim.Adam(self.actor_net.parameters(), lr=1e-3)

    def choose_action(self, s):
        probs = self.actor_net(s.unsqueeze(0))
        return int(torch.multinomial(probs.detach()[0], 1))

    def learn(self, s, a, td):
        acts_prob = self.actor_net(s.unsqueeze(0))
        log_prob = torch.log(acts_prob[0, a])
        exp_v = torch.mean(log_prob * td)
        loss = -exp_v
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()
        return exp_v


class Critic:
    def __init__(self):
        self.critic_net = Net(N_F, 20, 1)
        self.optimizer = torch.optim.Adam(self.critic_net.parameters(), lr=1e-2)

    def learn(self, s, r, s_):
        v, v_ = self.critic_net(s.unsqueeze(0)), self.critic_net(s_.unsqueeze(0))
        td_error = r + GAMMA * v_ - v
        loss = (td_error ** 2).sum()
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()
        return td_error


def env_step(state, action):
    push = 0.1 if action == 1 else -0.1
    next_state = torch.stack([state[0] + 0.05 * state[1], state[1] + push - 0.2 * state[2],
                              state[2] + 0.05 * state[3], state[3] + 0.3 * state[2] - push])
    done = bool(next_state[2].abs() > 0.4)
    return next_state, (-20.0 if done else 1.0), done


actor, critic = Actor(), Critic()
td_errors = []
for episode in range(EPISODES):
    s = torch.tensor([0.0, 0.01, 0.02 * (episode + 1), 0.0])
    for t in range(MAX_STEPS):
        a = actor.choose_action(s)
        s_, r, done = env_step(s, a)
        td_error = critic.learn(s, r, s_)
        actor.learn(s, a, td_error)
        td_errors.append(td_error.detach().reshape(()))
        s = s_
        if done:
            break

result = {"td_errors": torch.stack(td_errors),
          "params": [p.detach().clone() for net in (actor.actor_net, critic.critic_net) for p in net.parameters()]}
