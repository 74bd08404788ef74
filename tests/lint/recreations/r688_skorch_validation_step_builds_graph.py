"""skorch, issue 218 ("Should use torch.no_grad in validation_step()?"): fitting a PointNet with
skorch ran out of GPU memory, and the memory grew with every validation batch.
`NeuralNet.validation_step` (skorch/net.py) switched the module to eval mode and ran
`y_pred = self.infer(Xi); loss = self.get_loss(y_pred, yi, X=Xi, training=False)` without
`torch.no_grad()`, so every validation forward recorded a graph, and the returned `y_pred` (kept
by the caller for the epoch's scoring) held it alive.  The maintainers' fix (pull request 219)
wraps the step in `torch.no_grad()`.
Re-created with the net's fit loop split as skorch splits it (`fit_loop` -> `run_single_epoch`
-> `train_step` / `validation_step`, `infer`, `get_loss`), on a small module and random batches.
Nothing raises: `bug_shows()` shows the validation predictions kept by the loop carry a graph.
Buggy line: `y_pred = self.infer(Xi)` in `validation_step` (outside `torch.no_grad()`).
Source: https://github.com/skorch-dev/skorch/issues/218"""
import torch
import torch.nn as nn


class NeuralNet:
    def __init__(self, module, criterion, optimizer, lr=0.01, max_epochs=1):
        self.module_ = module
        self.criterion_ = criterion()
        self.optimizer_ = optimizer(self.module_.parameters(), lr=lr)
        self.max_epochs = max_epochs
        self.history = []

    def infer(self, x):
        return self.module_(x)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        return self.criterion_(y_pred, y_true)

    def train_step(self, Xi, yi):
        self.module_.train()
        self.optimizer_.zero_grad()
        y_pred = self.infer(Xi)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss.backward()
        self.optimizer_.step()
        return {'loss': loss, 'y_pred': y_pred}

    def validation_step(self, Xi, yi):
        self.module_.train(False)
        y_pred = self.infer(Xi)  # missed: ADL031
        loss = self.get_loss(y_pred, yi, X=Xi, training=False)
        return {'loss': loss, 'y_pred': y_pred}

    def run_single_epoch(self, iterator, training):
        step_fn = self.train_step if training else self.validation_step
        batch_losses, y_preds = [], []
        for Xi, yi in iterator:
            step = step_fn(Xi, yi)
            batch_losses.append(step['loss'].item())
            y_preds.append(step['y_pred'])
        return batch_losses, y_preds

    def fit_loop(self, train_batches, valid_batches):
        for _ in range(self.max_epochs):
            train_losses, _ = self.run_single_epoch(train_batches, training=True)
            valid_losses, valid_preds = self.run_single_epoch(valid_batches, training=False)
            self.history.append({'train_loss': sum(train_losses), 'valid_loss': sum(valid_losses),
                                 'valid_preds': valid_preds})
        return self


def make_net():
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    return NeuralNet(module, nn.CrossEntropyLoss, torch.optim.SGD)


def data():
    torch.manual_seed(1)
    train = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)]
    valid = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)]
    return train, valid


def run():
    net = make_net()
    train, valid = data()
    return net.fit_loop(train, valid)


def bug_shows():
    net = run()
    preds = net.history[-1]['valid_preds']
    # The validation step's outputs should carry no graph; here each keeps one alive.
    return all(p.grad_fn is not None for p in preds)


if __name__ == "__main__":
    print(bug_shows())
