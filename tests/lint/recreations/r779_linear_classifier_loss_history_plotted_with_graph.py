"""shirishbahirat/pytorch, `ty.py` (and its twin `tz.py`): a three-layer linear classifier trained
with cross-entropy on a fixed batch; each epoch appends the loss tensor itself to `train_loss`
(`train_loss.append(loss)`, printing `loss.item()` alongside) and after the loop plots the history
with `plt.plot(train_loss)`.  The list holds tensors that require grad, and matplotlib turns it
into a NumPy array, which calls `.numpy()` on each of them.
Re-created in my own words with the script's structure: the `Model` class, the Adam optimizer,
the epoch loop, and a small plotting helper standing in for `plt.plot`/`plt.show` that converts
the sequence with `np.asarray` as matplotlib does (matplotlib is not a dependency here).
Raises at the conversion ("Can't call numpy() on Tensor that requires grad").
Source: https://github.com/shirishbahirat/pytorch/blob/5625182aeea134f77a60fb29185919b2ec4a382b/ty.py"""
import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(8, 10)
        self.linear2 = nn.Linear(10, 8)
        self.linear3 = nn.Linear(8, 5)

    def forward(self, x):
        y_hat = self.linear1(x)
        y_hat = self.linear2(y_hat)
        y_hat = self.linear3(y_hat)
        return y_hat


def plot(values):
    # what plt.plot(values) does first with a sequence of y values
    ys = np.asarray(values, dtype=float)
    return ys


def run(epochs=5):
    torch.manual_seed(0)
    input = torch.randn(3, 8, requires_grad=True)
    target = torch.empty(3, dtype=torch.long).random_(5)
    model = Model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    train_loss = []
    for epoch in range(epochs):
        y_hat = model(input)
        optimizer.zero_grad()
        loss = criterion(y_hat, target)
        train_loss.append(loss)  # expect: ADL023
        print('Epoch {:4.0f} | Loss {:4.4f}'.format(epoch, loss.item()))
        loss.backward()
        optimizer.step()

    plot(train_loss)
