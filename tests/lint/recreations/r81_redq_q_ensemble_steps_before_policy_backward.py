"""REDQ: an ensemble of Q-networks kept in a Python list, one optimizer each.
The policy loss averages every Q-network's value of the policy's action; the
update then steps every Q optimizer in a loop before `policy_loss.backward()`
("Runtime error, due to alpha being updated before policy_loss.backward()",
PyTorch 1.8.1; the merged fix reorders the updates).
Source: https://github.com/watchernyu/REDQ/pull/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Normal


class Mlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes=(16, 16)):
        super().__init__()
        self.hidden_layers = nn.ModuleList()
        in_size = input_size
        for next_size in hidden_sizes:
            self.hidden_layers.append(nn.Linear(in_size, next_size))
            in_size = next_size
        self.last_fc_layer = nn.Linear(in_size, output_size)

    def forward(self, input):
        h = input
        for fc_layer in self.hidden_layers:
            h = F.relu(fc_layer(h))
        return self.last_fc_layer(h)


class TanhGaussianPolicy(Mlp):
    def __init__(self, obs_dim, action_dim, hidden_sizes=(16, 16)):
        super().__init__(obs_dim, action_dim, hidden_sizes)
        self.last_fc_log_std = nn.Linear(hidden_sizes[-1], action_dim)

    def forward(self, obs):
        h = obs
        for fc_layer in self.hidden_layers:
            h = F.relu(fc_layer(h))
        mean = self.last_fc_layer(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        normal = Normal(mean, log_std.exp())
        pretanh = normal.rsample()
        action = torch.tanh(pretanh)
        log_prob = normal.log_prob(pretanh) - torch.log(1 - action.pow(2) + 1e-6)
        return action, mean, log_std, log_prob.sum(1, keepdim=True), None, pretanh


class REDQSACAgent(object):
    def __init__(self, obs_dim, act_dim, num_Q=3, gamma=0.99, alpha=0.2, target_entropy=-2.0):
        self.policy_net = TanhGaussianPolicy(obs_dim, act_dim)
        self.q_net_list, self.q_target_net_list = [], []
        for q_i in range(num_Q):
            self.q_net_list.append(Mlp(obs_dim + act_dim, 1))
            self.q_target_net_list.append(Mlp(obs_dim + act_dim, 1))
        self.policy_optimizer = optim.Adam(self.policy_net.parameters(), lr=3e-4)
        self.q_optimizer_list = []
        for q_i in range(num_Q):
            self.q_optimizer_list.append(optim.Adam(self.q_net_list[q_i].parameters(), lr=3e-4))
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optim = optim.Adam([self.log_alpha], lr=3e-4)
        self.alpha = alpha
        self.target_entropy = target_entropy
        self.num_Q = num_Q
        self.gamma = gamma
        self.mse_criterion = nn.MSELoss()

    def train(self, batch):
        obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor = batch
        with torch.no_grad():
            a_tilda_next, _, _, log_prob_a_tilda_next, _, _ = self.policy_net.forward(obs_next_tensor)
            q_next = torch.cat([q(torch.cat([obs_next_tensor, a_tilda_next], 1)) for q in self.q_target_net_list], 1)
            next_q_with_log_prob = q_next.min(dim=1, keepdim=True)[0] - self.alpha * log_prob_a_tilda_next
            y_q = rews_tensor + self.gamma * (1 - done_tensor) * next_q_with_log_prob

        q_prediction_list = []
        for q_i in range(self.num_Q):
            q_prediction = self.q_net_list[q_i](torch.cat([obs_tensor, acts_tensor], 1))
            q_prediction_list.append(q_prediction)
        q_prediction_cat = torch.cat(q_prediction_list, dim=1)
        y_q = y_q.expand((-1, self.num_Q))
        q_loss_all = self.mse_criterion(q_prediction_cat, y_q) * self.num_Q

        a_tilda, mean_a_tilda, log_std_a_tilda, log_prob_a_tilda, _, pretanh = self.policy_net.forward(obs_tensor)
        q_a_tilda_list = []
        for sample_idx in range(self.num_Q):
            q_a_tilda = self.q_net_list[sample_idx](torch.cat([obs_tensor, a_tilda], 1))
            q_a_tilda_list.append(q_a_tilda)
        q_a_tilda_cat = torch.cat(q_a_tilda_list, 1)
        ave_q = torch.mean(q_a_tilda_cat, dim=1, keepdim=True)
        policy_loss = (self.alpha * log_prob_a_tilda - ave_q).mean()

        alpha_loss = -(self.log_alpha * (log_prob_a_tilda + self.target_entropy).detach()).mean()
        self.alpha_optim.zero_grad()
        alpha_loss.backward()
        self.alpha_optim.step()
        self.alpha = self.log_alpha.exp().item()

        for q_i in range(self.num_Q):
            self.q_optimizer_list[q_i].zero_grad()
        q_loss_all.backward()
        for q_i in range(self.num_Q):
            self.q_optimizer_list[q_i].step()  # missed: ADL003

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()


def run():
    torch.manual_seed(0)
    batch = (torch.randn(8, 3), torch.randn(8, 3), torch.rand(8, 2) * 2 - 1, torch.randn(8, 1), torch.zeros(8, 1))
    REDQSACAgent(3, 2).train(batch)
