"""Hamiltonian neural network: the learned energy's symplectic vector field."""
import torch


def vector_field(energy, q, p):
    q, p = q.requires_grad_(), p.requires_grad_()
    dh_dq, dh_dp = torch.autograd.grad(energy(torch.cat([q, p], -1)).sum(), (q, p))  # PRIMARY
    return dh_dp, -dh_dq
