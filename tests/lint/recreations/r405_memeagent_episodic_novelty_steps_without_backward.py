"""memeagent's `EpisodicNovelty.update` trains the embedding network with an
inverse-dynamics loss: it clears the optimizer, computes the cross-entropy
loss and calls `self.opt.step()`, but never `loss.backward()`.  The step has
no gradients; the embedding network never learns and nothing raises.  The fix
backpropagates the loss between the clear and the step.
Buggy line: `self.opt.step()` in `EpisodicNovelty.update`.
Source: https://github.com/YHL04/memeagent/issues/3"""
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


class EmbeddingNet(nn.Module):
    def __init__(self, obs_dim=6, action_size=3, emb_dim=8):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, emb_dim))
        self.head = nn.Linear(2 * emb_dim, action_size)

    def forward(self, obs):
        return self.embed(obs)

    def inverse(self, emb):
        return self.head(emb)


class EpisodicNovelty:
    def __init__(self, action_size=3, lr=5e-4):
        model = EmbeddingNet(action_size=action_size)
        self.model = deepcopy(model)
        self.eval_model = deepcopy(model)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)

    def update(self, obs1, obs2, actions):
        emb1 = self.model.forward(obs1)
        emb2 = self.model.forward(obs2)
        emb = torch.concat([emb1, emb2], dim=-1)
        logits = self.model.inverse(emb)

        self.opt.zero_grad()
        loss = F.cross_entropy(logits, actions.to(torch.int64).squeeze())
        loss = loss.mean()
        self.opt.step()  # expect: ADL026

        return loss.item()

    def update_eval(self):
        self.eval_model.load_state_dict(self.model.state_dict())


def bug_shows():
    """After an update, the embedding network's parameters have not moved."""
    torch.manual_seed(0)
    novelty = EpisodicNovelty()
    before = [p.detach().clone() for p in novelty.model.parameters()]
    novelty.update(torch.randn(4, 6), torch.randn(4, 6), torch.tensor([[0], [1], [2], [1]]))
    return all(torch.equal(a, b) for a, b in zip(before, novelty.model.parameters()))
