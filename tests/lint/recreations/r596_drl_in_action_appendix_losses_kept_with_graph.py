"""Deep Reinforcement Learning in Action, Appendix A.4 (the PyTorch primer): a
two-layer network written with raw weight tensors `w1`, `w2`
(`requires_grad=True`), trained on MNIST batches with a hand-written update
under `torch.no_grad()`, and the loss curve plotted at the end.  The loop
stores each loss as it is, `losses.append(loss)`, so every entry is a tensor
that requires grad (and keeps its graph); `plt.plot(losses)` converts the list
with numpy and fails with "Can't call numpy() on Tensor that requires grad.
Use tensor.detach().numpy() instead."  Re-created as the appendix's script
(the `nn` function, the epoch loop, the in-place update), with random images
in place of MNIST and the plotting call's array conversion
(`np.asarray`, which is what matplotlib does with the list).  Raises at the
plot.
Buggy line: `losses.append(loss)` (the loss tensor kept with its graph).
Source: https://github.com/DeepReinforcementLearning/DeepReinforcementLearningInAction/issues/42"""
import numpy as np
import torch


def nn(x, w1, w2):
    l1 = x @ w1
    l1 = torch.relu(l1)
    l2 = l1 @ w2
    return l2


def plot(values):
    """Stand-in for plt.plot: matplotlib turns the list into an array first."""
    return np.asarray(values)


def run():
    torch.manual_seed(0)
    w1 = torch.randn(784, 200, requires_grad=True)
    w2 = torch.randn(200, 10, requires_grad=True)
    train_data = torch.randint(0, 256, (600, 28, 28))
    train_labels = torch.randint(0, 10, (600,))
    lr = 0.0001
    epochs = 25
    batch_size = 100
    losses = []
    lossfn = torch.nn.CrossEntropyLoss()
    for i in range(epochs):
        rid = np.random.randint(0, train_data.shape[0], size=batch_size)
        x = train_data[rid].float().flatten(start_dim=1)
        x /= x.max()
        pred = nn(x, w1, w2)
        target = train_labels[rid]
        loss = lossfn(pred, target)
        losses.append(loss)  # expect: ADL023
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad  # expect: ADL018
            w2 -= lr * w2.grad  # expect: ADL018
    plot(losses)
