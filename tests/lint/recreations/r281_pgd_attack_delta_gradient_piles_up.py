"""Fast adversarial training's MNIST script runs a PGD attack inside each
training step: `delta.requires_grad = True`, forward `model(X + delta)`,
`opt.zero_grad()`, `loss.backward()`, then a signed step on
`delta.grad.detach()` written back through `delta.data[I] = ...`.
`opt.zero_grad()` clears the model's gradients, not `delta`'s, and `delta`
stays the same tensor across the attack iterations, so its gradient piles
up: from the second iteration on, the step follows the sum of all earlier
gradients instead of the current one.  Nothing raises.  The fix clears
`delta.grad` in each iteration.
Buggy line: `grad = delta.grad.detach()` in `pgd_attack`.
Expected finding: ADL018 there.
Source: https://github.com/locuslab/fast_adversarial/issues/26"""
import torch
import torch.nn as nn


def pgd_attack(model, criterion, opt, X, y, epsilon, alpha, attack_iters, grads_seen=None):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.data = torch.max(torch.min(1 - X, delta.data), 0 - X)
    for _ in range(attack_iters):
        delta.requires_grad = True
        output = model(X + delta)
        loss = criterion(output, y)
        opt.zero_grad()
        loss.backward()
        grad = delta.grad.detach()  # expect: ADL018
        if grads_seen is not None:
            grads_seen.append(grad.clone())
        I = output.max(1)[1] == y
        delta.data[I] = torch.clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)[I]
        delta.data[I] = torch.max(torch.min(1 - X, delta.data), 0 - X)[I]
    return delta.detach()


def train(model, opt, batches, epsilon=0.3, alpha=0.01, attack_iters=3):
    criterion = nn.CrossEntropyLoss()
    for X, y in batches:
        delta = pgd_attack(model, criterion, opt, X, y, epsilon, alpha, attack_iters)
        output = model(torch.clamp(X + delta, 0, 1))
        loss = criterion(output, y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def bug_shows():
    """The second attack step reads the first gradient plus its own."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    X, y = torch.rand(4, 1, 4, 4), torch.tensor([0, 1, 2, 0])
    seen = []
    torch.manual_seed(1)
    pgd_attack(model, nn.CrossEntropyLoss(), opt, X, y, 0.3, 0.0, 2, seen)
    # alpha = 0: delta does not move, so each iteration's own gradient is the first one
    return torch.allclose(seen[1], 2 * seen[0])


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, opt, [(torch.rand(4, 1, 4, 4), torch.tensor([0, 1, 2, 0]))])
