"""p-christ's Deep-Reinforcement-Learning-Algorithms-with-PyTorch: SAC (and
SAC_Discrete, which inherits its update) computes both critic losses and the
actor loss in `learn`, then `update_all_parameters` calls the base agent's
`take_optimisation_step(optimizer, network, loss, clipping_norm)` for each
critic and then for the actor.  The actor loss goes through both local
critics, already stepped in place: "modified by an inplace operation" in
`calculate_actor_loss`'s graph.  The fix steps the actor first, or computes
its loss after the critics' steps.
Buggy line: the first `self.take_optimisation_step(self.critic_optimizer, ...)`.
Source: https://github.com/p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch/issues/56"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class Base_Agent:
    def create_NN(self, input_dim, output_dim, hidden=16):
        return nn.Sequential(nn.Linear(input_dim, hidden), nn.ReLU(), nn.Linear(hidden, output_dim))

    def take_optimisation_step(self, optimizer, network, loss, clipping_norm=None, retain_graph=False):
        if not isinstance(network, list):
            network = [network]
        optimizer.zero_grad()
        loss.backward(retain_graph=retain_graph)
        if clipping_norm is not None:
            for net in network:
                torch.nn.utils.clip_grad_norm_(net.parameters(), clipping_norm)
        optimizer.step()


class SAC(Base_Agent):
    def __init__(self, state_size=3, action_size=2, lr=3e-4, discount_rate=0.99, alpha=0.2):
        self.action_size = action_size
        self.critic_local = self.create_NN(state_size + action_size, 1)
        self.critic_local_2 = self.create_NN(state_size + action_size, 1)
        self.critic_target = self.create_NN(state_size + action_size, 1)
        self.critic_target_2 = self.create_NN(state_size + action_size, 1)
        self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(), lr=lr)
        self.critic_optimizer_2 = torch.optim.Adam(self.critic_local_2.parameters(), lr=lr)
        self.actor_local = self.create_NN(state_size, action_size * 2)
        self.actor_optimizer = torch.optim.Adam(self.actor_local.parameters(), lr=lr)
        self.discount_rate = discount_rate
        self.alpha = alpha

    def produce_action_and_action_info(self, state):
        actor_output = self.actor_local(state)
        mean, log_std = actor_output[:, :self.action_size], actor_output[:, self.action_size:]
        normal = Normal(mean, log_std.clamp(-5, 2).exp())
        x_t = normal.rsample()
        action = torch.tanh(x_t)
        log_prob = (normal.log_prob(x_t) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)
        return action, log_prob

    def calculate_critic_losses(self, state_batch, action_batch, reward_batch, next_state_batch, mask_batch):
        with torch.no_grad():
            next_action, next_log_pi = self.produce_action_and_action_info(next_state_batch)
            next_in = torch.cat((next_state_batch, next_action), 1)
            min_next = torch.min(self.critic_target(next_in), self.critic_target_2(next_in)) - self.alpha * next_log_pi
            next_q_value = reward_batch + (1.0 - mask_batch) * self.discount_rate * min_next
        qf1 = self.critic_local(torch.cat((state_batch, action_batch), 1))
        qf2 = self.critic_local_2(torch.cat((state_batch, action_batch), 1))
        return F.mse_loss(qf1, next_q_value), F.mse_loss(qf2, next_q_value)

    def calculate_actor_loss(self, state_batch):
        action, log_pi = self.produce_action_and_action_info(state_batch)
        qf1_pi = self.critic_local(torch.cat((state_batch, action), 1))
        qf2_pi = self.critic_local_2(torch.cat((state_batch, action), 1))
        return ((self.alpha * log_pi) - torch.min(qf1_pi, qf2_pi)).mean()

    def update_all_parameters(self, critic_loss_1, critic_loss_2, actor_loss):
        self.take_optimisation_step(self.critic_optimizer, self.critic_local, critic_loss_1, 5.0)  # expect: ADL003
        self.take_optimisation_step(self.critic_optimizer_2, self.critic_local_2, critic_loss_2, 5.0)  # expect: ADL003
        self.take_optimisation_step(self.actor_optimizer, self.actor_local, actor_loss, 5.0)

    def learn(self, batch):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = batch
        qf1_loss, qf2_loss = self.calculate_critic_losses(state_batch, action_batch, reward_batch, next_state_batch, mask_batch)
        policy_loss = self.calculate_actor_loss(state_batch)
        self.update_all_parameters(qf1_loss, qf2_loss, policy_loss)


def run():
    torch.manual_seed(0)
    batch = (torch.randn(4, 3), torch.rand(4, 2) * 2 - 1, torch.randn(4, 1), torch.randn(4, 3), torch.zeros(4, 1))
    SAC().learn(batch)
