"""TQC trainer: the actor's loss is computed from the quantile critic (an
ensemble of networks kept in an `nn.ModuleList`), then the critic's optimizer
steps, and only then does `actor_loss.backward()` run through the critic's old
weights ("modified by an inplace operation", PyTorch >= 1.5; reported against
PyTorch 2.0).
Source: https://github.com/SamsungLabs/tqc_pytorch/issues/8"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self, input_size, hidden_sizes, output_size):
        super().__init__()
        self.fcs = []
        in_size = input_size
        for i, next_size in enumerate(hidden_sizes):
            fc = nn.Linear(in_size, next_size)
            self.add_module(f"fc{i}", fc)
            self.fcs.append(fc)
            in_size = next_size
        self.last_fc = nn.Linear(in_size, output_size)

    def forward(self, x):
        h = x
        for fc in self.fcs:
            h = F.relu(fc(h))
        return self.last_fc(h)


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim, n_quantiles, n_nets):
        super().__init__()
        self.nets = []
        self.n_quantiles = n_quantiles
        self.n_nets = n_nets
        for i in range(n_nets):
            net = Mlp(state_dim + action_dim, [16, 16], n_quantiles)
            self.add_module(f"qf{i}", net)
            self.nets.append(net)

    def forward(self, state, action):
        sa = torch.cat((state, action), dim=1)
        quantiles = torch.stack(tuple(net(sa) for net in self.nets), dim=1)
        return quantiles


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.net = Mlp(state_dim, [16, 16], 2 * action_dim)

    def forward(self, obs):
        mean, log_std = self.net(obs).split(self.net.last_fc.out_features // 2, dim=1)
        log_std = log_std.clamp(-20, 2)
        std = torch.exp(log_std)
        pre_tanh = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh)
        log_prob = (-0.5 * ((pre_tanh - mean) / std) ** 2 - log_std).sum(dim=1, keepdim=True)
        log_prob = log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(dim=1, keepdim=True)
        return action, log_prob


def quantile_huber_loss_f(quantiles, samples):
    pairwise_delta = samples[:, None, None, :] - quantiles[:, :, :, None]
    abs_pairwise_delta = torch.abs(pairwise_delta)
    huber_loss = torch.where(abs_pairwise_delta > 1, abs_pairwise_delta - 0.5, pairwise_delta ** 2 * 0.5)
    n_quantiles = quantiles.shape[2]
    tau = torch.arange(n_quantiles).float() / n_quantiles + 1 / 2 / n_quantiles
    loss = (torch.abs(tau[None, None, :, None] - (pairwise_delta < 0).float()) * huber_loss).mean()
    return loss


class Trainer(object):
    def __init__(self, *, actor, critic, critic_target, discount, tau, top_quantiles_to_drop, target_entropy):
        self.actor = actor
        self.critic = critic
        self.critic_target = critic_target
        self.log_alpha = torch.zeros((1,), requires_grad=True)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=3e-4)
        self.discount = discount
        self.tau = tau
        self.top_quantiles_to_drop = top_quantiles_to_drop
        self.target_entropy = target_entropy
        self.quantiles_total = critic.n_quantiles * critic.n_nets

    def train(self, batch, batch_size=8):
        state, action, next_state, reward, not_done = batch
        alpha = torch.exp(self.log_alpha)

        with torch.no_grad():
            new_next_action, next_log_pi = self.actor(next_state)
            next_z = self.critic_target(next_state, new_next_action)
            sorted_z, _ = torch.sort(next_z.reshape(batch_size, -1))
            sorted_z_part = sorted_z[:, :self.quantiles_total - self.top_quantiles_to_drop]
            target = reward + not_done * self.discount * (sorted_z_part - alpha * next_log_pi)

        cur_z = self.critic(state, action)
        critic_loss = quantile_huber_loss_f(cur_z, target)

        new_action, log_pi = self.actor(state)
        alpha_loss = -self.log_alpha * (log_pi + self.target_entropy).detach().mean()
        actor_loss = (alpha * log_pi - self.critic(state, new_action).mean(2).mean(1, keepdim=True)).mean()

        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()  # expect: ADL003

        for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)

        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()

        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()


def run():
    torch.manual_seed(0)
    critic = Critic(3, 2, n_quantiles=5, n_nets=2)
    critic_target = Critic(3, 2, n_quantiles=5, n_nets=2)
    trainer = Trainer(actor=Actor(3, 2), critic=critic, critic_target=critic_target, discount=0.99,
                      tau=0.005, top_quantiles_to_drop=2, target_entropy=-2.0)
    batch = (torch.randn(8, 3), torch.rand(8, 2) * 2 - 1, torch.randn(8, 3), torch.randn(8, 1), torch.ones(8, 1))
    trainer.train(batch)
