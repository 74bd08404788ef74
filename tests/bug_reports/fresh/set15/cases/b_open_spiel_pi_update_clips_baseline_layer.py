"""OpenSpiel's PyTorch policy-gradient agent (A2C loss): `_pi_update()` computes the policy loss
with the baseline detached, then calls `minimize_with_clipping(model, optimizer, loss)`, which
clears the optimizer's gradients, runs `backward()`, clips `model.parameters()` to the global norm
and steps. The policy update passes the baseline (value) layer as `model`: the clip runs over
parameters that received no gradient from the policy loss, and the policy gradients that the
pi optimizer applies are never clipped. Nothing is raised; updates are larger than configured.
Source: https://github.com/google-deepmind/open_spiel/issues/827 ("It looks like the code here is
optimizing the policy but clipping the gradients for the value head"), fixed by
https://github.com/deepmind/open_spiel/pull/828 (clip `self._policy_logits_layer`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

INFO_STATE, ACTIONS, BATCH, MAX_GRAD_NORM = 6, 3, 32, 0.1


class PolicyGradientAgent:
    def __init__(self):
        self.torso = nn.Sequential(nn.Linear(INFO_STATE, 16), nn.ReLU())
        self.policy_logits_layer = nn.Linear(16, ACTIONS)
        self.baseline_layer = nn.Linear(16, 1)
        self.pi_optimizer = torch.optim.SGD(
            list(self.torso.parameters()) + list(self.policy_logits_layer.parameters()), lr=0.5)
        self.critic_optimizer = torch.optim.SGD(
            list(self.torso.parameters()) + list(self.baseline_layer.parameters()), lr=0.1)

    def minimize_with_clipping(self, model, optimizer, loss):
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
        optimizer.step()

    def critic_update(self, info_states, returns):
        baseline = self.baseline_layer(self.torso(info_states)).squeeze(1)
        critic_loss = F.mse_loss(baseline, returns)
        self.minimize_with_clipping(self.baseline_layer, self.critic_optimizer, critic_loss)
        return critic_loss.detach()

    def pi_update(self, info_states, actions, returns):
        torso_out = self.torso(info_states)
        logits = self.policy_logits_layer(torso_out)
        baseline = self.baseline_layer(torso_out).squeeze(1).detach()
        log_probs = F.log_softmax(logits, dim=1).gather(1, actions[:, None]).squeeze(1)
        pi_loss = -((returns - baseline) * log_probs).mean()
        self.minimize_with_clipping(self.baseline_layer, self.pi_optimizer, pi_loss)
        return pi_loss.detach()


agent = PolicyGradientAgent()
info_states = torch.randn(BATCH, INFO_STATE)
actions = torch.randint(0, ACTIONS, (BATCH,))
returns = 5.0 * torch.randn(BATCH)
losses = []
for step in range(4):
    losses.append(agent.critic_update(info_states, returns))
    losses.append(agent.pi_update(info_states, actions, returns))

result = {
    "losses": torch.stack(losses),
    "policy": [p.detach().clone() for p in agent.policy_logits_layer.parameters()],
    "torso": [p.detach().clone() for p in agent.torso.parameters()],
}
