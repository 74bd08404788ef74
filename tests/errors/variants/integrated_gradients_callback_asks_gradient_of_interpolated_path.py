# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 29
# trigger: a Trainer-like loop calls an attribution callback at the end of each epoch; the
#   integrated-gradients helper in another file builds the straight path baseline + alpha * (x - baseline)
#   from a validation batch and a zero baseline (neither requires grad) and asks
#   torch.autograd.grad for the gradient of the class scores with respect to that path
# source: none found; the pattern as users write it (integrated gradients written by hand)
# helpers: lib_attribution29.py
# results: attributions, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_attribution29 import integrated_gradients  # noqa: E402


class AttributionCallback:
    def __init__(self, batch):
        self.batch = batch
        self.history = []

    def on_epoch_end(self, model):
        model.eval()
        x, target = self.batch
        self.history.append(integrated_gradients(model, x, torch.zeros_like(x), target))
        model.train()


class Trainer:
    def __init__(self, callbacks):
        self.callbacks = callbacks

    def fit(self, model, batches, epochs=2):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(epochs):
            for x, y in batches:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
            for callback in self.callbacks:
                callback.on_epoch_end(model)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
callback = AttributionCallback((torch.randn(2, 4), 1))
Trainer([callback]).fit(model, batches)
attributions = callback.history
