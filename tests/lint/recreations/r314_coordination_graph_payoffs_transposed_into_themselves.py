"""The deep coordination graph (DCG) controller computes, for each edge, a
payoff matrix from both agents' hidden states and from the flipped pair, and
transposes the flipped half in place before averaging:
`output[1] = output[1].transpose(dim0=-2, dim1=-1)`.  The right-hand side is
a view of the very tensor being written, so newer PyTorch refuses the copy
("unsupported operation: some elements of the input tensor and the
written-to tensor refer to a single memory location. Please clone() the
tensor before performing the operation").  The fix copies the transposed
view first (`.clone()`).
Buggy line: `output[1] = output[1].transpose(dim0=-2, dim1=-1)` in
`DeepCoordinationGraphMAC.payoffs`.
Expected finding: ADL010 there.
Source: https://github.com/wendelinboehmer/dcg/pull/19"""
import torch as th
import torch.nn as nn


class DeepCoordinationGraphMAC(nn.Module):
    def __init__(self, n_agents=3, n_actions=2, rnn_hidden_dim=4):
        super().__init__()
        self.n_actions = n_actions
        self.edges_from = th.tensor([0, 1])
        self.edges_to = th.tensor([1, 2])
        self.utility_fun = nn.Linear(rnn_hidden_dim, n_actions)
        self.payoff_fun = nn.Linear(2 * rnn_hidden_dim, n_actions * n_actions)

    def payoffs(self, hidden_states):
        n = self.n_actions
        inputs = th.stack([th.cat([hidden_states[:, self.edges_from], hidden_states[:, self.edges_to]], dim=-1),
                           th.cat([hidden_states[:, self.edges_to], hidden_states[:, self.edges_from]], dim=-1)], dim=0)
        output = self.payoff_fun(inputs)
        output = output.view(*(list(output.shape[:-1]) + [n, n]))
        output[1] = output[1].transpose(dim0=-2, dim1=-1)  # expect: ADL010
        return output.mean(dim=0)

    def q_values(self, hidden_states, actions):
        f_i = self.utility_fun(hidden_states)
        f_ij = self.payoffs(hidden_states)
        q_i = f_i.gather(dim=-1, index=actions).squeeze(dim=-1).mean(dim=-1)
        a_from = actions[:, self.edges_from, 0]
        a_to = actions[:, self.edges_to, 0]
        q_ij = f_ij.view(f_ij.shape[0], f_ij.shape[1], -1).gather(-1, (a_from * self.n_actions + a_to).unsqueeze(-1))
        return q_i + q_ij.squeeze(-1).mean(dim=-1)


def run():
    th.manual_seed(0)
    mac = DeepCoordinationGraphMAC()
    hidden = th.randn(5, 3, 4)
    actions = th.randint(0, 2, (5, 3, 1))
    target = th.randn(5)
    loss = (mac.q_values(hidden, actions) - target).pow(2).mean()
    loss.backward()
