"""Stable-Baselines3-Contrib, issue 248 ("How to do pre-training on the RecurrentPPO
MlpLstmPolicy"): a user pre-trained a `RecurrentPPO` student policy by imitation with a
`train(model, device, train_loader, optimizer, start_lstm_state)` function that starts from the
agent's `_last_lstm_states`, runs the policy on each batch with the LSTM states the previous
batch returned, and calls `loss.backward(retain_graph=True)` then `optimizer.step()`; the second
batch's backward failed in the LSTM's backward (the anomaly trace points at `_VF.lstm`) with an
in-place modification error.  The states carried from batch to batch keep the previous batch's
graph, whose LSTM weights the optimizer step has since changed in place; `retain_graph=True`
(added to get past "backward through the graph a second time") only moves the failure.  The fix
is to carry the states detached.
Re-created with a recurrent actor-critic policy in the shape of sb3-contrib's (an LSTM over the
features, episode-start masking, a Gaussian action head sampled with `rsample`, states returned
with the actions) and the user's `train` function; the issue shows the traceback and the last
lines of `train`, the rest of its body is written in their shape.
Buggy line: `action, _, _, lstm_states = model(obs, lstm_states, episode_starts)` carrying the
states, with `optimizer.step()` between the batches.
Source: https://github.com/Stable-Baselines-Team/stable-baselines3-contrib/issues/248"""
import torch as th
import torch.nn as nn


class RecurrentActorCriticPolicy(nn.Module):
    def __init__(self, obs_dim=4, act_dim=2, hidden=8):
        super().__init__()
        self.features = nn.Linear(obs_dim, hidden)
        self.lstm_actor = nn.LSTM(hidden, hidden)
        self.action_net = nn.Linear(hidden, act_dim)
        self.value_net = nn.Linear(hidden, 1)
        self.log_std = nn.Parameter(th.zeros(act_dim))

    @staticmethod
    def _process_sequence(features, lstm_states, episode_starts, lstm):
        hidden, cell = lstm_states
        mask = (1.0 - episode_starts).view(1, -1, 1)
        out, (hidden, cell) = lstm(features.unsqueeze(0), (hidden * mask, cell * mask))
        return out.squeeze(0), (hidden, cell)

    def forward(self, obs, lstm_states, episode_starts):
        features = th.tanh(self.features(obs))
        latent_pi, lstm_states_pi = self._process_sequence(features, lstm_states, episode_starts, self.lstm_actor)
        mean_actions = self.action_net(latent_pi)
        distribution = th.distributions.Normal(mean_actions, self.log_std.exp())
        actions = distribution.rsample()
        values = self.value_net(latent_pi)
        log_prob = distribution.log_prob(actions).sum(dim=-1)
        return actions, values, log_prob, lstm_states_pi


def train(model, train_loader, optimizer, start_lstm_state):
    model.train()
    criterion = nn.MSELoss()
    lstm_states = start_lstm_state
    for obs, target in train_loader:
        episode_starts = th.zeros(obs.shape[0])
        optimizer.zero_grad()
        action, _, _, lstm_states = model(obs, lstm_states, episode_starts)
        action_prediction = action.double()
        loss = criterion(action_prediction.view(-1), target.view(-1).double())
        loss.backward(retain_graph=True)
        optimizer.step()  # expect: ADL003


def run():
    th.manual_seed(0)
    student_policy = RecurrentActorCriticPolicy()
    optimizer = th.optim.Adadelta(student_policy.parameters(), lr=1.0)
    last_lstm_states = (th.zeros(1, 3, 8), th.zeros(1, 3, 8))
    train_loader = [(th.randn(3, 4), th.randn(3, 2)) for _ in range(3)]
    for epoch in range(1, 2):
        train(student_policy, train_loader, optimizer, last_lstm_states)


if __name__ == "__main__":
    run()
