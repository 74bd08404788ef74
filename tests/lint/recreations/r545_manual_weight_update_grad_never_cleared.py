"""A blog post on the in-place RuntimeError walks through a linear layer
trained by hand: forward, mean squared error, `loss.backward()`, then
`with torch.no_grad(): model.weight -= 0.1 * model.weight.grad`, and a
second forward and `loss.backward()` for the next iteration.  The post
blames the in-place update for an error at the second iteration; run, the
second iteration does not raise (its graph is new).  What is wrong is that
nothing clears `model.weight.grad` between the two backwards: the second
backward adds to the first gradient, so any later update applies the sum of
both.  Nothing raises.
Buggy line: the second `loss.backward()` (nothing clears `.grad` after the
first update).
Source: https://twelvescompany.co.uk/post/error-message-like-runtime-error-one-of-the-variables"""
import torch


def two_iterations(model, input_tensor, lr=0.1, record=None):
    # Forward pass
    output = model(input_tensor)
    loss = torch.mean((output - 1) ** 2)
    # Backpropagation
    loss.backward()
    # Update weights using gradient descent
    with torch.no_grad():
        model.weight -= lr * model.weight.grad
    if record is not None:
        record.append((model.weight.grad.clone(), model.weight.detach().clone()))
    # Next iteration
    output = model(input_tensor)
    loss = torch.mean((output - 1) ** 2)
    loss.backward()  # expect: ADL018
    if record is not None:
        record.append((model.weight.grad.clone(), None))
    with torch.no_grad():
        model.weight -= lr * model.weight.grad
    return model


def bug_shows():
    """The gradient used by the second update is the first gradient plus the
    second, not the second alone."""
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1)
    x = torch.randn(1, 10, requires_grad=True)
    record = []
    bias = model.bias.detach().clone()
    two_iterations(model, x, record=record)
    (g1, w1), (used, _) = record
    w = w1.clone().requires_grad_(True)
    loss2 = torch.mean((x.detach() @ w.t() + bias - 1) ** 2)
    (g2,) = torch.autograd.grad(loss2, w)
    return torch.allclose(used, g1 + g2) and not torch.allclose(used, g2)
