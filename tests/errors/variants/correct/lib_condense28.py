"""Gradient matching for dataset condensation: the synthetic set should give the network the
gradients the real data gives it."""
import torch


def parameter_gradients(network, loss, create_graph=False):
    return torch.autograd.grad(loss, list(network.parameters()), create_graph=create_graph)


def gradient_match(network, real, real_labels, synthetic, synthetic_labels):
    loss_fn = torch.nn.functional.cross_entropy
    real_grads = [g.detach() for g in parameter_gradients(network, loss_fn(network(real), real_labels))]
    synthetic_grads = torch.autograd.grad(loss_fn(network(synthetic), synthetic_labels), list(network.parameters()), create_graph=True)  # PRIMARY
    return sum((s - r).pow(2).sum() for s, r in zip(synthetic_grads, real_grads))
