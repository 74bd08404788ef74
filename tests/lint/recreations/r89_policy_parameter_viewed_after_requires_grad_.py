"""A linear policy's parameter is created with `torch.rand(n).requires_grad_()`
and then re-bound to its column view (`theta = theta.view((-1, 1))`); the
name now holds a non-leaf, its `.grad` is None after backward, and the manual
update fails ("Sometimes gradient doesn't back-propagate after view").
Source: https://github.com/pytorch/pytorch/issues/8474"""
import torch


def policy_gradient_step(theta, states, actions, returns, lr=0.1):
    logits = states @ theta
    log_probs = torch.nn.functional.logsigmoid(logits * (2 * actions - 1))
    loss = -(log_probs.squeeze(1) * returns).mean()
    loss.backward()
    return loss


def train(num_features=5, iterations=3):
    theta = torch.rand(num_features).requires_grad_()
    theta = theta.view((-1, 1))
    for _ in range(iterations):
        states = torch.randn(16, num_features)
        actions = torch.randint(0, 2, (16, 1)).float()
        returns = torch.randn(16)
        policy_gradient_step(theta, states, actions, returns)
        with torch.no_grad():
            theta += 0.1 * theta.grad  # expect: ADL020
    return theta


def run():
    torch.manual_seed(0)
    train()
