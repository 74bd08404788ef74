"""neuromancer's `Trainer.train` backpropagates and steps on
`output[self.train_metric]` for each batch, then appends that loss to
`losses` to report `torch.mean(torch.stack(losses))` at the end of the epoch.
The list holds every batch's graph until the epoch ends, and the stacked
mean is kept in the epoch's `output` with its graph ("we're not detaching
the grad graphs from the metrics before we store them").  Memory grows with
the number of batches; nothing raises.  The fix appends
`output[self.train_metric].detach()`.
Buggy line: `losses.append(output[self.train_metric])` in `Trainer.train`.
Source: https://github.com/pnnl/neuromancer/pull/292"""
import torch
import torch.nn as nn


class Problem(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Linear(2, 2)

    def forward(self, batch):
        u = self.policy(batch["x"])
        return {"train_loss": (u - batch["ref"]).pow(2).mean(), "u": u}


class Trainer:
    def __init__(self, model, train_data, epochs=2, clip=100.0):
        self.model = model
        self.train_data = train_data
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.epochs = epochs
        self.clip = clip
        self.train_metric = "train_loss"
        self.history = []

    def train(self):
        for i in range(self.epochs):
            self.model.train()
            losses = []
            for t_batch in self.train_data:
                output = self.model(t_batch)
                self.optimizer.zero_grad()
                output[self.train_metric].backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                self.optimizer.step()
                losses.append(output[self.train_metric])  # expect: ADL023
            output[f"mean_{self.train_metric}"] = torch.mean(torch.stack(losses))
            self.history.append(output)


def bug_shows():
    """The epoch's mean loss, kept in the history, carries every batch's graph."""
    torch.manual_seed(0)
    data = [{"x": torch.randn(4, 2), "ref": torch.randn(4, 2)} for _ in range(3)]
    trainer = Trainer(Problem(), data)
    trainer.train()
    return all(out["mean_train_loss"].grad_fn is not None for out in trainer.history)
