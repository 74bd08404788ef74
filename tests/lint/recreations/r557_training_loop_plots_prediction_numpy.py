"""A guide to "RuntimeError: Can't call numpy() on Tensor that requires
grad.  Use tensor.detach().numpy() instead": converting a tensor that is
part of an active graph to NumPy (for Matplotlib, SciPy or inspection) is
refused because the array could not carry the graph.  Re-created as a
regression training loop that, every epoch, converts the predictions to
NumPy for a plot helper.  Raises at the first conversion.
Buggy line: `preds.numpy()`.
Source: https://tutorialreference.com/python/examples/faq/python-pytorch-error-runtimeerror-cant-call-numpy-on-tensor-that-requires-grad-detach"""
import numpy as np
import torch
import torch.nn as nn


def plot_predictions(xs, ys, preds):
    # stand-in for matplotlib: only checks the shapes line up
    return np.stack([xs, ys, preds], axis=1)


def train(model, x, y, epochs=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        optimizer.zero_grad()
        preds = model(x)
        loss = ((preds - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        plot_predictions(x.numpy()[:, 0], y.numpy()[:, 0], preds.numpy()[:, 0])  # expect: ADL036
    return model


def run():
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 10).unsqueeze(1)
    train(nn.Linear(1, 1), x, 3 * x + 1)
