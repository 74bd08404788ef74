"""Deep Learning with Python (notebooks, chapter 7), issue 293: the PyTorch-backend version of the
custom `train_step` ("customizing what fit() does") calls `loss.backward()`, reads each trainable
weight's `.grad` and applies them with the optimizer, but never clears the gradients: each step
applies the sum of every gradient computed so far, "or else the results are terrible".
Re-created in my own words with the notebook's structure, without Keras: a small `Model` base with
`compile`, `fit` over batches calling `train_step`, `trainable_weights` and a loss tracker, an
optimizer object with `apply(gradients, weights)` in the Keras style, and the chapter's
`CustomModel.train_step`.
Nothing raises: `bug_shows()` compares the weights after two steps with the same steps taken with
the gradients cleared.
Buggy line: `self.optimizer.apply(gradients, trainable_weights)` without a clear first.
Source: https://github.com/fchollet/deep-learning-with-python-notebooks/issues/293"""
import copy

import torch
import torch.nn as nn


class SGD:
    def __init__(self, learning_rate=0.1):
        self.learning_rate = learning_rate

    def apply(self, gradients, weights):
        for g, w in zip(gradients, weights):
            w.sub_(self.learning_rate * g)


class Mean:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update_state(self, value):
        self.total += float(value)
        self.count += 1

    def result(self):
        return self.total / max(self.count, 1)


class Model(nn.Module):
    def compile(self, optimizer, loss):
        self.optimizer = optimizer
        self.loss_fn = loss

    @property
    def trainable_weights(self):
        return [p for p in self.parameters() if p.requires_grad]

    def fit(self, x, y, batch_size=4, epochs=1):
        logs = {}
        for _ in range(epochs):
            for i in range(0, len(x), batch_size):
                logs = self.train_step((x[i:i + batch_size], y[i:i + batch_size]))
        return logs


loss_tracker = Mean()


class CustomModel(Model):
    def __init__(self):
        super().__init__()
        self.dense1 = nn.Linear(8, 16)
        self.dense2 = nn.Linear(16, 3)

    def forward(self, inputs):
        return self.dense2(torch.relu(self.dense1(inputs)))

    def train_step(self, data):
        inputs, targets = data
        predictions = self(inputs)
        loss = self.loss_fn(predictions, targets)
        loss.backward()
        trainable_weights = [v for v in self.trainable_weights]
        gradients = [v.grad for v in trainable_weights]
        with torch.no_grad():
            self.optimizer.apply(gradients, trainable_weights)  # expect: ADL018
        loss_tracker.update_state(loss.detach())
        return {"loss": loss_tracker.result()}


def make_model():
    torch.manual_seed(0)
    model = CustomModel()
    model.compile(optimizer=SGD(0.1), loss=nn.CrossEntropyLoss())
    return model


def data():
    torch.manual_seed(1)
    return torch.randn(8, 8), torch.randint(0, 3, (8,))


def run():
    x, y = data()
    model = make_model()
    model.fit(x, y, batch_size=4)
    return model


def bug_shows():
    model = run()
    reference = make_model()
    x, y = data()
    for i in range(0, len(x), 4):
        reference.zero_grad()
        reference.loss_fn(reference(x[i:i + 4]), y[i:i + 4]).backward()
        with torch.no_grad():
            for p in reference.parameters():
                p.sub_(0.1 * p.grad)
    return not torch.allclose(model.dense1.weight, reference.dense1.weight)
