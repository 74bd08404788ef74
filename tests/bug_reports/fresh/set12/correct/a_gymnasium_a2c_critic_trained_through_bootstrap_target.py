"""The A2C of Gymnasium's vectorized-environments tutorial: `get_losses` computes GAE advantages from
the critic's `value_preds` with gradients on, and the critic's loss is `advantages.pow(2).mean()`.
The critic is meant to regress V(s_t) toward a fixed bootstrapped target, but here the gradient also
flows through `value_preds[t + 1]` inside every TD error and through the whole GAE recursion, so the
critic is pulled toward making the next state's value match this one's. Nothing raises; the
critic's gradients are simply not the A2C ones.
Source: https://github.com/Farama-Foundation/Gymnasium/issues/1494 ("Incorrect A2C implementation":
"you use advantages as the critic target without detaching it, so the critic loss backpropagates
through the GAE computation itself (i.e., through value_preds[t] and value_preds[t+1] inside
td_error and the recursion) ... you want to regress V to a fixed target"; closed as a bug, fix in
pull request 1498 "Fixed A2C critic regression against fixed target").
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

N_ENVS, OBS, N_ACTIONS, T = 4, 3, 2, 8


class A2C(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(OBS, 16), nn.ReLU(), nn.Linear(16, 1))
        self.actor = nn.Sequential(nn.Linear(OBS, 16), nn.ReLU(), nn.Linear(16, N_ACTIONS))
        self.critic_optim = torch.optim.RMSprop(self.critic.parameters(), lr=5e-3)
        self.actor_optim = torch.optim.RMSprop(self.actor.parameters(), lr=1e-3)

    def forward(self, x):
        return self.critic(x), self.actor(x)

    def select_action(self, x, generator):
        state_values, action_logits = self.forward(x)
        action_pd = torch.distributions.Categorical(logits=action_logits)
        actions = torch.multinomial(action_pd.probs.detach(), 1, generator=generator).squeeze(1)
        return actions, action_pd.log_prob(actions), state_values, action_pd.entropy()

    def get_losses(self, rewards, action_log_probs, value_preds, entropy, masks, gamma, lam, ent_coef):
        advantages = torch.zeros(T, N_ENVS)
        # compute the advantages using GAE
        gae = 0.0
        for t in reversed(range(T - 1)):
            td_error = rewards[t] + gamma * masks[t] * value_preds[t + 1] - value_preds[t]
            gae = (td_error + gamma * lam * masks[t] * gae).detach()
            advantages[t] = gae
        # regress the critic toward a fixed target
        returns = advantages + value_preds.detach()
        critic_loss = (returns - value_preds).pow(2).mean()
        actor_loss = -(advantages.detach() * action_log_probs).mean() - ent_coef * entropy.mean()
        return critic_loss, actor_loss

    def update_parameters(self, critic_loss, actor_loss):
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()


def env_step(states, actions):
    # A point pushed left or right; the reward is for staying near the origin.
    push = torch.where(actions == 1, 0.2, -0.2)
    states = torch.stack([states[:, 0] + push, states[:, 1] * 0.9, states[:, 0]], dim=1)
    return states, -states[:, 0].abs()


agent = A2C()
generator = torch.Generator().manual_seed(0)
states = torch.randn(N_ENVS, OBS)
critic_losses, actor_losses = [], []
for update in range(4):
    value_preds, rewards, log_probs, entropies = [], [], [], []
    for t in range(T):
        actions, action_log_probs, state_values, entropy = agent.select_action(states, generator)
        states, reward = env_step(states, actions)
        value_preds.append(state_values.squeeze(-1))
        rewards.append(reward)
        log_probs.append(action_log_probs)
        entropies.append(entropy)
    masks = torch.ones(T, N_ENVS)
    critic_loss, actor_loss = agent.get_losses(torch.stack(rewards), torch.stack(log_probs), torch.stack(value_preds),
                                               torch.stack(entropies), masks, gamma=0.99, lam=0.95, ent_coef=0.01)
    agent.update_parameters(critic_loss, actor_loss)
    critic_losses.append(critic_loss.detach())
    actor_losses.append(actor_loss.detach())

result = {"critic_losses": critic_losses, "actor_losses": actor_losses,
          "params": [p.detach().clone() for p in agent.parameters()]}
