"""A trainer that lets a model return several losses calls `backward()` on
each of them in turn (`for loss in ensure_tuple(self.state.loss):
loss.backward()`).  When the losses share part of the graph (two heads on one
trunk), the first backward frees the trunk's saved tensors and the second
fails ("Trying to backward through the graph a second time").  The fix sums
the losses and calls `backward()` once.
Source: https://github.com/mosaicml/composer/pull/1240"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def ensure_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


class State:
    def __init__(self, model, optimizers):
        self.model = model
        self.optimizers = optimizers
        self.batch = None
        self.outputs = None
        self.loss = None


class TwoHeadModel(nn.Module):
    def __init__(self, in_features=8, num_classes=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_features, 16), nn.Tanh())
        self.cls_head = nn.Linear(16, num_classes)
        self.rec_head = nn.Linear(16, in_features)

    def forward(self, batch):
        x, _ = batch
        h = self.trunk(x)
        return self.cls_head(h), self.rec_head(h)

    def loss(self, outputs, batch):
        x, y = batch
        logits, recon = outputs
        return F.cross_entropy(logits, y), F.mse_loss(recon, x)


class Trainer:
    def __init__(self, model, optimizer):
        self.state = State(model, [optimizer])

    def _train_microbatch(self, batch):
        self.state.batch = batch
        self.state.outputs = self.state.model(self.state.batch)
        self.state.loss = self.state.model.loss(self.state.outputs, self.state.batch)
        for loss in ensure_tuple(self.state.loss):
            loss.backward()  # missed: ADL019
        return self.state.loss

    def fit(self, dataloader):
        for batch in dataloader:
            for optimizer in self.state.optimizers:
                optimizer.zero_grad()
            self._train_microbatch(batch)
            for optimizer in self.state.optimizers:
                optimizer.step()


def run():
    torch.manual_seed(0)
    model = TwoHeadModel()
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.fit([(torch.randn(4, 8), torch.randint(0, 3, (4,)))])
