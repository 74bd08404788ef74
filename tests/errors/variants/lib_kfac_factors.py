"""A K-FAC-style input-covariance preconditioner (library module of a set 22 variant)."""
import torch


def precondition(grad, activations, damping=0.1):
    cov = activations.t() @ activations / len(activations)
    cov.add_(cov.t())  # PRIMARY
    cov.mul_(0.5)
    eye = torch.eye(cov.shape[0])
    return torch.linalg.solve(cov + damping * eye, grad.t()).t()
