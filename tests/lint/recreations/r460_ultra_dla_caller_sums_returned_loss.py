"""ULTRA_pytorch's DLA learner computes `self.loss` in `train`, backpropagates
and steps, and returns `self.loss` (a tensor); the main loop averages the
returned losses over a checkpoint window, `loss += step_loss /
steps_per_checkpoint`.  The window's sum keeps every step's graph, and the
CPU memory is used up after some 10k steps; nothing raises.  The fix returns
`self.loss.item()`.
Buggy line: `loss += step_loss / steps_per_checkpoint` in `train_loop`.
Source: https://github.com/ULTR-Community/ULTRA_pytorch/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DLA:
    def __init__(self, feature_size=5, list_size=4):
        self.ranking_model = nn.Linear(feature_size, 1)
        self.propensity_model = nn.Parameter(torch.zeros(list_size))
        params = list(self.ranking_model.parameters()) + [self.propensity_model]
        self.optimizer = torch.optim.Adagrad(params, lr=0.05)
        self.global_step = 0

    def train(self, input_feed):
        scores = self.ranking_model(input_feed["features"]).squeeze(-1)
        weights = F.softmax(self.propensity_model, dim=0)
        self.loss = -(weights * F.log_softmax(scores, dim=-1) * input_feed["clicks"]).sum(-1).mean()
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        self.global_step += 1
        return self.loss, None


def train_loop(model, batches, steps_per_checkpoint=3):
    loss = 0.0
    history = []
    for current_step, input_feed in enumerate(batches, 1):
        step_loss, _ = model.train(input_feed)
        loss += step_loss / steps_per_checkpoint  # missed: ADL023
        if current_step % steps_per_checkpoint == 0:
            history.append(loss)
            loss = 0.0
    return history


def bug_shows():
    """The checkpoint averages hold every step's graph."""
    torch.manual_seed(0)
    batches = [{"features": torch.randn(2, 4, 5), "clicks": torch.randint(0, 2, (2, 4)).float()}
               for _ in range(6)]
    history = train_loop(DLA(), batches)
    return all(h.grad_fn is not None for h in history)
