"""Fully parameterized Quantile Function (FQF) agent (toshikwa/fqf-iqn-qrdqn.pytorch,
agent/fqf_agent.py `learn`): a fraction network proposes the quantile fractions from the state
embeddings and is trained by its own optimizer on `fraction_loss + entropy_loss`
(`retain_graph=True`); the quantile network and the embedding network are then trained on
`quantile_loss + entropy_loss`. The entropy of the fractions depends on the fraction network's
weights, which `fraction_optim.step()` has just updated in place, so the second backward raises
"one of the variables needed for gradient computation has been modified by an inplace operation"
(PyTorch >= 1.5).
Source: https://github.com/toshikwa/fqf-iqn-qrdqn.pytorch/issues/3 (answer: "The cause of the
problem is the entropy loss, which depends on the fraction network, and networks other than the
fraction network should never be trained on entropy loss"; fixed in commit 047a627: the fractions
are computed from `state_embeddings.detach()` and the quantile optimizer gets `quantile_loss`).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

STATE_DIM, EMBED, ACTIONS, N, COSINES, BATCH = 6, 16, 3, 8, 8, 5
GAMMA, KAPPA, ENT_COEF = 0.99, 1.0, 0.01


class FQFNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.dqn_net = nn.Sequential(nn.Linear(STATE_DIM, EMBED), nn.ReLU())
        self.fraction_net = nn.Linear(EMBED, N)
        self.cosine_net = nn.Sequential(nn.Linear(COSINES, EMBED), nn.ReLU())
        self.quantile_net = nn.Linear(EMBED, ACTIONS)

    def calculate_state_embeddings(self, states):
        return self.dqn_net(states)

    def calculate_fractions(self, state_embeddings):
        log_probs = torch.log_softmax(self.fraction_net(state_embeddings), dim=1)
        probs = log_probs.exp()
        taus = torch.cat([torch.zeros(state_embeddings.shape[0], 1), probs.cumsum(dim=1)], dim=1)
        tau_hats = ((taus[:, :-1] + taus[:, 1:]) / 2.0).detach()
        entropies = -(log_probs * probs).sum(dim=1)
        return taus, tau_hats, entropies

    def calculate_quantiles(self, taus, state_embeddings):
        i_pi = math.pi * torch.arange(1, COSINES + 1).view(1, 1, COSINES)
        tau_embeddings = self.cosine_net(torch.cos(taus.unsqueeze(-1) * i_pi))
        return self.quantile_net(state_embeddings.unsqueeze(1) * tau_embeddings)


def quantile_huber_loss(td_errors, taus):
    huber = torch.where(td_errors.abs() <= KAPPA, 0.5 * td_errors.pow(2), KAPPA * (td_errors.abs() - 0.5 * KAPPA))
    weight = (taus.unsqueeze(-1) - (td_errors.detach() < 0).float()).abs()
    return (weight * huber / KAPPA).sum(dim=1).mean()


def update_params(optim, loss, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    optim.step()


online_net, target_net = FQFNet(), FQFNet()
target_net.load_state_dict(online_net.state_dict())
fraction_optim = torch.optim.RMSprop(online_net.fraction_net.parameters(), lr=1e-3)
quantile_optim = torch.optim.Adam(
    list(online_net.dqn_net.parameters()) + list(online_net.cosine_net.parameters())
    + list(online_net.quantile_net.parameters()), lr=1e-3)

states, next_states = torch.randn(BATCH, STATE_DIM), torch.randn(BATCH, STATE_DIM)
actions = torch.randint(0, ACTIONS, (BATCH,))
rewards, dones = torch.randn(BATCH), torch.zeros(BATCH)


def at_action(quantiles, actions):
    return quantiles.gather(2, actions.view(-1, 1, 1).expand(-1, quantiles.shape[1], 1)).squeeze(2)


losses = []
for step in range(2):
    state_embeddings = online_net.calculate_state_embeddings(states)
    taus, tau_hats, entropies = online_net.calculate_fractions(state_embeddings=state_embeddings.detach())
    current_sa_quantile_hats = at_action(online_net.calculate_quantiles(tau_hats, state_embeddings), actions)

    # Fraction loss: the gradient of the 1-Wasserstein distance w.r.t. the fractions, computed
    # explicitly and applied through the taus.
    with torch.no_grad():
        sa_quantiles = at_action(online_net.calculate_quantiles(taus[:, 1:-1], state_embeddings), actions)
        gradient_of_taus = 2 * sa_quantiles - current_sa_quantile_hats[:, :-1] - current_sa_quantile_hats[:, 1:]
    fraction_loss = (gradient_of_taus * taus[:, 1:-1]).sum(dim=1).mean()

    with torch.no_grad():
        next_embeddings = target_net.calculate_state_embeddings(next_states)
        next_quantiles = target_net.calculate_quantiles(tau_hats, next_embeddings)
        next_actions = next_quantiles.mean(dim=1).argmax(dim=1)
        target_quantiles = rewards.unsqueeze(1) + GAMMA * (1 - dones.unsqueeze(1)) * at_action(next_quantiles, next_actions)
    td_errors = target_quantiles.unsqueeze(1) - current_sa_quantile_hats.unsqueeze(2)
    quantile_loss = quantile_huber_loss(td_errors, tau_hats)

    entropy_loss = -ENT_COEF * entropies.mean()

    update_params(fraction_optim, fraction_loss + entropy_loss, retain_graph=True)
    update_params(quantile_optim, quantile_loss)
    losses.append(torch.stack([fraction_loss.detach(), quantile_loss.detach()]))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in online_net.parameters()]}
