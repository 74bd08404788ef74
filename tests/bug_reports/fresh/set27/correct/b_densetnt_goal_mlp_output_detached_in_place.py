"""DenseTNT-style motion forecasting for autonomous driving: an encoder summarises the agent's past
trajectory and the map, goal candidates (2-D points) are scored against it (a goal sub-graph fuses
each candidate with the agent's feature), and a "complete trajectory" head predicts the future
path towards the ground-truth goal. That head encodes the goal with `self.goals_2D_mlps` and then
calls `target_feature.detach_()` on the result (next to the intended `.detach()`s on the encoder's
states, which keep the trajectory loss out of the encoder). With the goal sub-graph enabled,
`goals_2D_mlps` is used nowhere else, so it never gets a gradient: its weights stay at their
initial values for the whole training, and the trajectory head is fitted on random goal features.
Nothing raises.
Source: https://github.com/Tsinghua-MARS-Lab/DenseTNT/issues/11 ("goals_2D_mlps does not have
gradients even for the training. Is it expected?"; the maintainer: "No, it is not expected. The
operation of detaching is redundant")
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

HIDDEN = 32
PAST, FUTURE = 10, 12


class MLP(nn.Module):
    def __init__(self, in_features, out_features=None):
        super().__init__()
        out_features = out_features or in_features
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x):
        return F.relu(self.norm(self.linear(x)))


class PointSubGraph(nn.Module):
    """Fuses each goal candidate with the agent's feature."""

    def __init__(self, hidden_size):
        super().__init__()
        self.layer_0 = MLP(2, hidden_size // 2)
        self.layer_1 = MLP(hidden_size, hidden_size)

    def forward(self, goals, agent):
        h = self.layer_0(goals)
        return self.layer_1(torch.cat([h, agent[: HIDDEN // 2].expand(h.shape[0], -1)], dim=-1))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.past = nn.Sequential(MLP(2 * PAST, HIDDEN), MLP(HIDDEN))

    def forward(self, past):
        return self.past(past.flatten(1))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.goals_2D_mlps = nn.Sequential(MLP(2, HIDDEN), MLP(HIDDEN), MLP(HIDDEN))
        self.goals_2D_point_sub_graph = PointSubGraph(HIDDEN)
        self.goals_2D_decoder = nn.Sequential(MLP(2 * HIDDEN, HIDDEN), nn.Linear(HIDDEN, 1))
        self.complete_traj_decoder = nn.Sequential(MLP(2 * HIDDEN, HIDDEN), nn.Linear(HIDDEN, FUTURE * 2))

    def get_scores(self, goals_2D, agent):
        goals_2D_hidden = self.goals_2D_point_sub_graph(goals_2D, agent)
        scores = self.goals_2D_decoder(torch.cat([agent.expand(goals_2D_hidden.shape), goals_2D_hidden], dim=-1))
        return F.log_softmax(scores.squeeze(-1), dim=-1)

    def calc_loss(self, agent, goals_2D, gt_points):
        scores = self.get_scores(goals_2D, agent)
        label = torch.argmin(((goals_2D - gt_points[-1]) ** 2).sum(-1))
        loss = F.nll_loss(scores.unsqueeze(0), label.unsqueeze(0))
        target_feature = self.goals_2D_mlps(gt_points[-1])
        predict_traj = self.complete_traj_decoder(torch.cat([agent.detach(), target_feature], dim=-1))
        loss = loss + F.smooth_l1_loss(predict_traj.view(FUTURE, 2), gt_points)
        return loss


def make_scene():
    """A straight-ish trajectory with a random heading and speed; goal candidates on a grid."""
    heading = torch.rand(()) * 6.283
    speed = 0.5 + torch.rand(())
    direction = torch.stack([torch.cos(heading), torch.sin(heading)])
    t = torch.arange(-PAST + 1, FUTURE + 1, dtype=torch.float32).unsqueeze(1)
    traj = t * speed * direction + 0.05 * torch.randn(PAST + FUTURE, 2)
    grid = torch.stack(torch.meshgrid(torch.linspace(-16, 16, 9), torch.linspace(-16, 16, 9), indexing="ij"), -1)
    return traj[:PAST], traj[PAST:], grid.reshape(-1, 2)


encoder, decoder = Encoder(), Decoder()
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=3e-3)
losses = []
for step in range(60):
    optimizer.zero_grad()
    batch_loss = 0.0
    for _ in range(4):
        past, future, goals_2D = make_scene()
        agent = encoder(past.unsqueeze(0)).squeeze(0)
        batch_loss = batch_loss + decoder.calc_loss(agent, goals_2D, future)
    batch_loss = batch_loss / 4
    batch_loss.backward()
    optimizer.step()
    losses.append(batch_loss.detach())

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in list(encoder.parameters()) + list(decoder.parameters())]}
