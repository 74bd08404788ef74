"""Open Catalyst Project trainer (now fairchem): a pull request "Resolves
validation gpu memory issue" reports that memory allocated while
"Evaluating on val" (6.6-8.1 GB) is far higher than during training
(2.2-4.5 GB) on the same data; the fix runs validation without tracking
gradients.  Re-created in the trainer's shape: an energy trainer with
`train()` calling `validate(split="val")` at the end of each epoch, and
`validate()` setting `eval()`, looping over the loader with `_forward`,
`_compute_loss` and an `Evaluator` that folds the batch metrics.  Nothing
raises; each validation batch builds a graph nobody backpropagates.
Buggy line: `out = self._forward(batch)` in `validate` (gradients on).
Source: https://github.com/facebookresearch/fairchem/pull/199"""
import torch
import torch.nn as nn


class EnergyModel(nn.Module):
    def __init__(self, n_feat=6):
        super().__init__()
        self.embed = nn.Linear(n_feat, 16)
        self.head = nn.Linear(16, 1)

    def forward(self, batch):
        return {"energy": self.head(torch.tanh(self.embed(batch["x"]))).squeeze(-1)}


class Evaluator:
    def eval(self, out, batch, prev_metrics):
        metrics = dict(prev_metrics)
        err = (out["energy"] - batch["y"]).abs()
        metrics["energy_mae_total"] = metrics.get("energy_mae_total", 0.0) + err.sum().item()
        metrics["numel"] = metrics.get("numel", 0) + err.numel()
        return metrics


class EnergyTrainer:
    def __init__(self, model, train_loader, val_loader, lr=1e-3):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.loss_fn = nn.L1Loss()
        self.evaluator = Evaluator()
        self.val_outputs_seen = []

    def _forward(self, batch):
        return self.model(batch)

    def _compute_loss(self, out, batch):
        return self.loss_fn(out["energy"], batch["y"])

    def train(self, epochs=1):
        for epoch in range(epochs):
            self.model.train()
            for batch in self.train_loader:
                out = self._forward(batch)
                loss = self._compute_loss(out, batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.validate(split="val")

    def validate(self, split="val"):
        self.model.eval()
        metrics = {}
        for batch in self.val_loader:
            out = self._forward(batch)  # missed: ADL031
            loss = self._compute_loss(out, batch)
            metrics = self.evaluator.eval(out, batch, metrics)
            metrics["loss"] = metrics.get("loss", 0.0) + loss.item()
            self.val_outputs_seen.append(out["energy"].grad_fn is not None)
        return metrics


def bug_shows():
    """Every validation forward records a graph back to the model's weights."""
    torch.manual_seed(0)
    data = [{"x": torch.randn(5, 6), "y": torch.randn(5)} for _ in range(2)]
    trainer = EnergyTrainer(EnergyModel(), data, data)
    trainer.train(epochs=1)
    return trainer.val_outputs_seen == [True, True]
