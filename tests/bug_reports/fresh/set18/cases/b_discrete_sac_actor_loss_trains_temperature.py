"""Discrete soft actor-critic with automatic temperature tuning: `log_alpha` has its own optimizer,
and `alpha = log_alpha.exp()` is recomputed after each temperature step and used in the critics'
targets (under `no_grad`) and in the actor loss, `alpha * log_pi - min(Q1, Q2)`. There `alpha` is
not detached: all four optimizers are cleared at the top of the update, so the actor loss's
backward() leaves its own gradient on `log_alpha`, the temperature loss's backward() adds to it,
and the temperature step applies both. The temperature is trained by the actor's objective as
well as by its own; nothing is raised.
Source: https://github.com/Felhof/DiscreteSAC/issues/4 ("Detach on the alpha term": alpha should be
detached in the actor loss's `inside_term`, since backpropagating the actor loss also reaches
alpha; Stable-Baselines3's SAC detaches the entropy coefficient for the same reason, citing
rail-berkeley/softlearning#60).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACTIONS, BATCH, GAMMA, TARGET_ENTROPY = 6, 4, 32, 0.99, -0.98 * torch.log(torch.tensor(1 / 4))


def mlp(out):
    return nn.Sequential(nn.Linear(OBS, 32), nn.ReLU(), nn.Linear(32, out))


actor, critic, critic2 = mlp(ACTIONS), mlp(ACTIONS), mlp(ACTIONS)
critic_target, critic_target2 = mlp(ACTIONS), mlp(ACTIONS)
critic_target.load_state_dict(critic.state_dict())
critic_target2.load_state_dict(critic2.state_dict())
actor_optimiser = torch.optim.Adam(actor.parameters(), lr=3e-3)
critic_optimiser = torch.optim.Adam(critic.parameters(), lr=3e-3)
critic_optimiser2 = torch.optim.Adam(critic2.parameters(), lr=3e-3)
log_alpha = torch.zeros((), requires_grad=True)
alpha_optimiser = torch.optim.Adam([log_alpha], lr=3e-2)
alpha = log_alpha.exp()


def action_info(states):
    probabilities = F.softmax(actor(states), dim=-1)
    return probabilities, torch.log(probabilities + 1e-8)


alphas, actor_losses = [], []
for update in range(20):
    states, next_states = torch.randn(BATCH, OBS), torch.randn(BATCH, OBS)
    actions, rewards = torch.randint(0, ACTIONS, (BATCH,)), torch.randn(BATCH)
    critic_optimiser.zero_grad()
    critic_optimiser2.zero_grad()
    actor_optimiser.zero_grad()
    alpha_optimiser.zero_grad()

    with torch.no_grad():
        next_probabilities, next_log_probabilities = action_info(next_states)
        next_q = torch.min(critic_target(next_states), critic_target2(next_states))
        soft_values = (next_probabilities * (next_q - alpha * next_log_probabilities)).sum(dim=1)
        targets = rewards + GAMMA * soft_values
    q1 = critic(states).gather(1, actions[:, None]).squeeze(1)
    q2 = critic2(states).gather(1, actions[:, None]).squeeze(1)
    F.mse_loss(q1, targets).backward()
    F.mse_loss(q2, targets).backward()
    critic_optimiser.step()
    critic_optimiser2.step()

    probabilities, log_probabilities = action_info(states)
    inside_term = alpha * log_probabilities - torch.min(critic(states), critic2(states))
    actor_loss = (probabilities * inside_term).sum(dim=1).mean()
    actor_loss.backward()
    actor_optimiser.step()

    alpha_loss = -(log_alpha * (log_probabilities + TARGET_ENTROPY).detach()).mean()
    alpha_loss.backward()
    alpha_optimiser.step()
    alpha = log_alpha.exp()
    alphas.append(alpha.detach())
    actor_losses.append(actor_loss.detach())

result = {"alphas": torch.stack(alphas), "actor_losses": torch.stack(actor_losses),
          "actor": [p.detach().clone() for p in actor.parameters()]}
