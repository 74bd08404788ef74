"""lambeq's `PytorchTrainer.training_step` returns the batch's predictions
`y_hat` as the model produced them, with their graph, and the training loop
keeps every step's predictions for the epoch's metrics: each batch's graph
stayed reachable until the end of the epoch (a memory leak).  Nothing
raises.  The fix returns `y_hat.detach()`.
Buggy line: `return y_hat, loss.item()` in `PytorchTrainer.training_step`.
ADL028 reports the caller's keeping line (marked), the function's `return` as related.
Source: https://github.com/Quantinuum/lambeq/pull/251"""
import torch
import torch.nn as nn


class PytorchTrainer:
    def __init__(self, model, loss_function, optimizer, epochs=1):
        self.model = model
        self.loss_function = loss_function
        self.optimizer = optimizer(model.parameters(), lr=1e-2)
        self.epochs = epochs
        self.train_costs = []

    def training_step(self, batch):
        x, y = batch
        y_hat = self.model(x)
        loss = self.loss_function(y_hat, y)
        self.train_costs.append(loss.item())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return y_hat, loss.item()

    def fit(self, train_batches, evaluate_functions):
        for _ in range(self.epochs):
            predictions, labels = [], []
            for batch in train_batches:
                y_hat, _ = self.training_step(batch)
                predictions.append(y_hat)  # expect: ADL028
                labels.append(batch[1])
            scores = {name: fn(torch.cat(predictions), torch.cat(labels)) for name, fn in evaluate_functions.items()}
        return predictions, scores


def accuracy(y_hat, y):
    return (y_hat.argmax(1) == y.argmax(1)).float().mean().item()


def bug_shows():
    """The predictions kept for the metrics still hold every batch's graph."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2), nn.Softmax(dim=1))
    trainer = PytorchTrainer(model, nn.BCELoss(), torch.optim.AdamW)
    batches = [(torch.randn(3, 4), torch.eye(2)[torch.tensor([0, 1, 1])]) for _ in range(3)]
    predictions, _ = trainer.fit(batches, {"acc": accuracy})
    return all(p.grad_fn is not None for p in predictions)
