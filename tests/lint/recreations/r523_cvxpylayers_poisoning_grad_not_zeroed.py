"""cvxpylayers' PyTorch data-poisoning tutorial fits a (differentiable)
regression layer on training points `Xtrain` that require grad, and attacks
it with the gradient of the test loss with respect to `Xtrain`.  The
notebook first backpropagates the training loss through the same layer (to
check the fit), and then reads `Xtrain.grad` after `test_loss.backward()`
without clearing it: the gradient it ranks points by is the test loss's plus
the training loss's.  The pull request "zero Xtrain.grad before using it"
fixes this.  Nothing raises.  (The convex layer is a closed-form ridge fit
here, differentiable as the layer is.)
Buggy line: `test_loss.backward()` with `Xtrain.grad` never cleared after
`train_loss.backward()`.
Source: https://github.com/cvxpy/cvxpylayers/pull/102"""
import torch


class RidgeLayer:
    """theta = argmin ||X theta - y||^2 + lam ||theta||^2, differentiable in X."""

    def __init__(self, lam=0.1):
        self.lam = lam

    def __call__(self, X, y):
        n, d = X.shape
        A = X.t() @ X + self.lam * torch.eye(d, dtype=X.dtype)
        return torch.linalg.solve(A, X.t() @ y)


def loss_fn(X, y, theta):
    return ((X @ theta - y) ** 2).mean()


def poisoning_attack(Xtrain, Ytrain, Xtest, Ytest, layer, record=None):
    Xtrain.requires_grad_(True)
    theta = layer(Xtrain, Ytrain)
    train_loss = loss_fn(Xtrain, Ytrain, theta)
    train_loss.backward()
    print("train loss", train_loss.item())

    theta = layer(Xtrain, Ytrain)
    test_loss = loss_fn(Xtest, Ytest, theta)
    test_loss.backward()  # missed: ADL018
    Xtrain_grad = Xtrain.grad
    if record is not None:
        record.append(Xtrain_grad.clone())
    scores = Xtrain_grad.norm(dim=1)
    return scores.argsort(descending=True)


def bug_shows():
    """The gradient ranked is not the test loss's gradient alone."""
    torch.manual_seed(0)
    Xtrain, Ytrain = torch.randn(8, 3, dtype=torch.double), torch.randn(8, dtype=torch.double)
    Xtest, Ytest = torch.randn(5, 3, dtype=torch.double), torch.randn(5, dtype=torch.double)
    record = []
    poisoning_attack(Xtrain, Ytrain, Xtest, Ytest, RidgeLayer(), record=record)
    X = Xtrain.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(loss_fn(Xtest, Ytest, RidgeLayer()(X, Ytrain)), X)
    return not torch.allclose(record[0], g)
