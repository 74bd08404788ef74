"""A QMIX implementation refreshes its target networks every
`target_update_cycle` training steps, but the mixer's line loads the target
mixer's own state, `self.target_qmix_net.load_state_dict(
self.target_qmix_net.state_dict())`, instead of the trained mixer's: the
target mixer stays at its initial weights for the whole run and the TD
targets never track the learned mixer.  Nothing raises.  The fix loads
`self.eval_qmix_net.state_dict()`.
Buggy line: `self.target_qmix_net.load_state_dict(...)` in `QMIX.learn`.
Source: https://github.com/thesouther/MARL/issues/8"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AgentRNN(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3, hidden=8):
        super().__init__()
        self.fc = nn.Linear(obs_dim, hidden)
        self.out = nn.Linear(hidden, n_actions)

    def forward(self, obs):
        return self.out(F.relu(self.fc(obs)))


class QMixNet(nn.Module):
    def __init__(self, n_agents=2, state_dim=4, embed=8):
        super().__init__()
        self.n_agents = n_agents
        self.hyper_w1 = nn.Linear(state_dim, n_agents * embed)
        self.hyper_w2 = nn.Linear(state_dim, embed)

    def forward(self, q_values, states):
        w1 = torch.abs(self.hyper_w1(states)).view(-1, self.n_agents, self.hyper_w2.out_features)
        hidden = F.elu(torch.bmm(q_values.unsqueeze(1), w1))
        w2 = torch.abs(self.hyper_w2(states)).unsqueeze(2)
        return torch.bmm(hidden, w2).view(-1)


class QMIX:
    def __init__(self, n_agents=2, gamma=0.99, target_update_cycle=2):
        self.gamma = gamma
        self.target_update_cycle = target_update_cycle
        self.eval_rnn, self.target_rnn = AgentRNN(), AgentRNN()
        self.eval_qmix_net, self.target_qmix_net = QMixNet(n_agents), QMixNet(n_agents)
        self.target_rnn.load_state_dict(self.eval_rnn.state_dict())
        self.target_qmix_net.load_state_dict(self.eval_qmix_net.state_dict())
        params = list(self.eval_rnn.parameters()) + list(self.eval_qmix_net.parameters())
        self.optimizer = torch.optim.RMSprop(params, lr=5e-3)

    def learn(self, batch, train_step):
        obs, actions, reward, next_obs, state, next_state = batch
        q_evals = self.eval_rnn(obs).gather(2, actions.unsqueeze(2)).squeeze(2)
        with torch.no_grad():
            q_targets = self.target_rnn(next_obs).max(2)[0]
            q_total_target = self.target_qmix_net(q_targets, next_state)
        q_total_eval = self.eval_qmix_net(q_evals, state)
        loss = F.mse_loss(q_total_eval, reward + self.gamma * q_total_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        if train_step > 0 and train_step % self.target_update_cycle == 0:
            self.target_rnn.load_state_dict(self.eval_rnn.state_dict())
            self.target_qmix_net.load_state_dict(self.target_qmix_net.state_dict())  # expect: ADL021


def bug_shows():
    """After an update cycle the target mixer still has its initial weights,
    while the trained mixer has moved."""
    torch.manual_seed(0)
    qmix = QMIX()
    initial = [p.clone() for p in qmix.target_qmix_net.parameters()]
    for step in range(3):
        batch = (torch.randn(5, 2, 4), torch.randint(0, 3, (5, 2)), torch.randn(5),
                 torch.randn(5, 2, 4), torch.randn(5, 4), torch.randn(5, 4))
        qmix.learn(batch, step)
    unchanged = all(torch.equal(a, b) for a, b in zip(initial, qmix.target_qmix_net.parameters()))
    moved = not all(torch.equal(a, b) for a, b in zip(initial, qmix.eval_qmix_net.parameters()))
    return unchanged and moved
