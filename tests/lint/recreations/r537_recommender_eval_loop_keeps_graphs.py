"""generative-recommenders' training script evaluates the ranking model in
`eval_loop` (after training) and in `train_eval_loop` (every few batches
during training).  The pull request "Optimize eval loops with
torch.no_grad() to reduce GPU memory usage" wraps both loops: before it,
each evaluation batch's forward pass ran with gradients on, and the
predictions handed to the metric accumulator kept their graphs until the
metrics were computed.  Nothing raises; memory grows with the number of
evaluation batches.
Buggy lines: `preds = model(features)` in `eval_loop` and
`eval_preds = model(eval_features)` in `train_eval_loop`.
Source: https://github.com/meta-recsys/generative-recommenders/pull/387"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Ranker(nn.Module):
    def __init__(self, n_features=6, n_tasks=2):
        super().__init__()
        self.tower = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU(), nn.Linear(16, n_tasks))

    def forward(self, features):
        return self.tower(features)


class MetricsAccumulator:
    def __init__(self):
        self.preds, self.labels = [], []

    def update(self, preds, labels):
        self.preds.append(preds)
        self.labels.append(labels)

    def compute(self):
        preds, labels = torch.cat(self.preds), torch.cat(self.labels)
        return {"bce": F.binary_cross_entropy_with_logits(preds, labels).item()}


def make_batches(n=3, batch=4):
    return [(torch.randn(batch, 6), torch.randint(0, 2, (batch, 2)).float()) for _ in range(n)]


def eval_loop(model, eval_batches, metrics):
    model.eval()
    for features, labels in eval_batches:
        preds = model(features)  # missed: ADL031
        metrics.update(preds, labels)
    return metrics.compute()


def train_eval_loop(model, optimizer, train_batches, eval_batches, eval_interval=2):
    metrics = MetricsAccumulator()
    for step, (features, labels) in enumerate(train_batches):
        model.train()
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(features), labels)
        loss.backward()
        optimizer.step()
        if step % eval_interval == 0:
            model.eval()
            for eval_features, eval_labels in eval_batches:
                eval_preds = model(eval_features)  # missed: ADL031
                metrics.update(eval_preds, eval_labels)
    return metrics


def bug_shows():
    """Every prediction collected by both loops holds a graph."""
    torch.manual_seed(0)
    model = Ranker()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    during = train_eval_loop(model, optimizer, make_batches(), make_batches(2))
    after = MetricsAccumulator()
    eval_loop(model, make_batches(2), after)
    return all(p.grad_fn is not None for p in during.preds + after.preds)
