"""GraphStorm's node-prediction trainer (and its edge, link and multi-task
siblings) backpropagated, stepped, and only then clipped:
`loss.backward(); self.optimizer.step(); clip_grad_norm_(...)`.  The step has
already used the unclipped gradients and the next iteration clears them, so
`--max-grad-norm` silently did nothing.  The fix clips between the backward
pass and the step.
Buggy line: `th.nn.utils.clip_grad_norm_(...)` after `self.optimizer.step()`
in `GSgnnNodePredictionTrainer.fit`.
Expected finding: ADL022 there (a clip after the step it should bound;
the run-time doctor checks the order too).
Source: https://github.com/awslabs/graphstorm/pull/1382"""
import torch
import torch as th
import torch.nn as nn
import torch.nn.functional as F


class NodeClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.decoder = nn.Linear(8, 2)

    def forward(self, feats):
        return self.decoder(F.relu(self.encoder(feats)))


class GSgnnNodePredictionTrainer:
    def __init__(self, model, lr=1.0):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def fit(self, loader, max_grad_norm=None, grad_norm_type=2.0):
        for feats, labels in loader:
            logits = self.model(feats)
            loss = F.cross_entropy(logits, labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if max_grad_norm is not None:
                th.nn.utils.clip_grad_norm_(self.model.parameters(), max_grad_norm, grad_norm_type)  # expect: ADL022


def bug_shows():
    """With a tiny clipping norm the update is as large as without one."""
    torch.manual_seed(1)
    loader = [(torch.randn(4, 4) * 10, torch.tensor([0, 1, 1, 0]))]
    torch.manual_seed(0)
    clipped = GSgnnNodePredictionTrainer(NodeClassifier())
    torch.manual_seed(0)
    unclipped = GSgnnNodePredictionTrainer(NodeClassifier())
    clipped.fit(loader, max_grad_norm=1e-3)
    unclipped.fit(loader)
    return torch.allclose(clipped.model.decoder.weight, unclipped.model.decoder.weight)
