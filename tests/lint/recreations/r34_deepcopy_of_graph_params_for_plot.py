"""A movement-primitive class keeps the weights a network predicted
(`self.params`, a tensor with a graph) and its plotting helper deep-copies
them ("Only Tensors created explicitly by the user (graph leaves) support the
deepcopy protocol") when it is called during training.
Source: https://github.com/ALRhub/MP_PyTorch/issues/99"""
import copy

import torch
import torch.nn as nn


class RBFBasis:
    def __init__(self, num_basis, tau=1.0):
        self.centers = torch.linspace(0, tau, num_basis)
        self.width = (tau / num_basis) ** 2

    def basis(self, times):
        return torch.exp(-((times[..., None] - self.centers) ** 2) / (2 * self.width))


class ProMP:
    def __init__(self, num_dof, num_basis):
        self.num_dof = num_dof
        self.num_basis = num_basis
        self.basis_gn = RBFBasis(num_basis)
        self.times = None
        self.params = None

    def update_inputs(self, times, params):
        self.times = times
        self.params = params

    def get_traj_pos(self):
        basis = self.basis_gn.basis(self.times)
        weights = self.params.reshape(*self.params.shape[:-1], self.num_dof, self.num_basis)
        return torch.einsum("...tb,...db->...td", basis, weights)

    def show_scaled_basis(self):
        # work on copies, so that plotting leaves the primitive's state alone
        params = copy.deepcopy(self.params)  # missed: ADL006
        times = copy.deepcopy(self.times)
        weights = params.reshape(*params.shape[:-1], self.num_dof, self.num_basis)
        scaled = self.basis_gn.basis(times)[..., None, :] * weights[..., None, :, :]
        return scaled.detach().numpy()


def train(steps=2, log_interval=1):
    torch.manual_seed(0)
    mp = ProMP(num_dof=2, num_basis=5)
    net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2 * 5))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    times = torch.linspace(0, 1, 20).expand(8, -1)
    for step in range(steps):
        context = torch.randn(8, 4)
        target = torch.randn(8, 20, 2)
        params = net(context)
        mp.update_inputs(times, params)
        traj = mp.get_traj_pos()
        loss = ((traj - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_interval == 0:
            mp.show_scaled_basis()


def run():
    train()
