"""Behaviour cloning of a grasping policy conditioned on a trajectory latent (a hierarchical
policy for a robot arm): a point-cloud encoder gives the state feature, a trajectory-embedding
network and a trajectory sampler both read it, and the policy acts on the state feature joined
with the trajectory latent. One update is two passes: the policy loss is back-propagated with
`retain_graph=self.re_sampler_step` and every optimizer steps (`optimize`); then a second pass
trains the sampler alone on the sampler's latent computed before the steps
(`sampler_update_parameters`). That latent's graph runs through the encoder, whose weights the
first pass has just updated in place, so the second backward() fails: "one of the variables needed
for gradient computation has been modified by an inplace operation: [torch.FloatTensor [64, 64]]".
The second pass only steps the sampler, so it needs no gradient through the encoder: the change
feeds the sampler the encoder's feature detached, which gives the sampler the gradient the second
pass means and never walks into the updated encoder.
Source: https://github.com/liruiw/HCG/issues/5
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class BCAgent:
    def __init__(self, point_dim=32, feat_dim=64, latent_dim=16, action_dim=7):
        self.re_sampler_step = True
        self.state_feature_extractor = mlp([point_dim, 64, feat_dim])
        self.traj_feature_extractor = mlp([feat_dim, 32, latent_dim])
        self.traj_feature_sampler = mlp([feat_dim, 32, latent_dim])
        self.policy = mlp([feat_dim + latent_dim, 64, action_dim])
        self.state_feat_encoder_optim = torch.optim.Adam(self.state_feature_extractor.parameters(), lr=1e-3)
        self.traj_feature_extractor_opt = torch.optim.Adam(self.traj_feature_extractor.parameters(), lr=1e-3)
        self.traj_feature_sampler_opt = torch.optim.Adam(self.traj_feature_sampler.parameters(), lr=1e-3)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=1e-3)

    def train_traj_net(self, point_state):
        feature = self.state_feature_extractor(point_state)
        self.traj_feat = self.traj_feature_extractor(feature)
        self.sampler_traj_feat = self.traj_feature_sampler(feature.detach())
        return feature

    def optimize(self, loss):
        self.state_feat_encoder_optim.zero_grad()
        self.policy_optim.zero_grad()
        self.traj_feature_extractor_opt.zero_grad()
        self.traj_feature_sampler_opt.zero_grad()
        loss.backward(retain_graph=self.re_sampler_step)
        self.policy_optim.step()
        self.state_feat_encoder_optim.step()
        self.traj_feature_extractor_opt.step()
        self.traj_feature_sampler_opt.step()

    def update_parameters(self, point_state, expert_action):
        feature = self.train_traj_net(point_state)
        self.state_policy_feat_th = feature.clone().detach()
        pi = self.policy(torch.cat((feature, self.traj_feat), dim=1))
        loss = F.mse_loss(pi, expert_action)
        self.optimize(loss)
        if self.re_sampler_step:  # separately update sampler
            self.sampler_update_parameters(expert_action)
        return loss.item()

    def sampler_update_parameters(self, expert_action):
        state_feat = torch.cat((self.state_policy_feat_th, self.sampler_traj_feat), dim=1)
        pi = self.policy(state_feat)
        traj_latent_loss = F.mse_loss(self.sampler_traj_feat, self.traj_feat.detach())
        sampler_bc_loss = F.mse_loss(pi, expert_action)
        self.traj_feature_sampler_opt.zero_grad()  # only update sampler
        self.state_feat_encoder_optim.zero_grad()
        self.policy_optim.zero_grad()
        total_loss = traj_latent_loss + sampler_bc_loss
        total_loss.backward()
        self.traj_feature_sampler_opt.step()


agent = BCAgent()
points = torch.randn(16, 32)
actions = torch.randn(16, 7)
losses = [agent.update_parameters(points[i:i + 4], actions[i:i + 4]) for i in range(0, 16, 4)]
result = {"losses": torch.tensor(losses),
          "sampler": [p.detach().clone() for p in agent.traj_feature_sampler.parameters()],
          "policy": [p.detach().clone() for p in agent.policy.parameters()]}
