"""PyTorch-DAGMM (issue 4, "Loss is not reducing and gradients are coming up as None"): the deep
autoencoding Gaussian mixture model's loss is computed by a separate `ComputeLoss` class;
`ComputeLoss.forward(x, x_hat, z, gamma)` adds the reconstruction error, the sample energy and the
covariance penalty and returns `Variable(loss, requires_grad=True)`.  `Variable(...)` of a tensor
is a new leaf without the graph, so `TrainerDAGMM.train`'s `loss.backward()` fills no gradient of
the model and `optimizer.step()` never changes it.
Re-created in my own words with the repository's structure: `DAGMM` (a compression network, an
estimation network ending in a softmax over the mixture components, `forward` returning
`(z_c, x_hat, z, gamma)`), `ComputeLoss` with `compute_params` and `compute_energy`, and
`TrainerDAGMM.train` with its epoch and batch loops.
Nothing raises: `bug_shows()` shows every parameter without a gradient after a backward pass.
Source: https://github.com/mperezcarrasco/PyTorch-DAGMM/issues/4 (code: forward_step.py at
https://github.com/mperezcarrasco/PyTorch-DAGMM/blob/7ec580c1c0b7197b5d0274bca732ecdf646f45ed/forward_step.py)"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.autograd import Variable


class DAGMM(nn.Module):
    def __init__(self, n_gmm=2, z_dim=1, in_dim=6):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, 4)
        self.fc2 = nn.Linear(4, z_dim)
        self.fc3 = nn.Linear(z_dim, 4)
        self.fc4 = nn.Linear(4, in_dim)
        self.fc5 = nn.Linear(z_dim + 2, 4)
        self.fc6 = nn.Linear(4, n_gmm)

    def encode(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))

    def decode(self, x):
        return self.fc4(torch.tanh(self.fc3(x)))

    def estimate(self, z):
        return F.softmax(self.fc6(torch.tanh(self.fc5(z))), dim=1)

    def forward(self, x):
        z_c = self.encode(x)
        x_hat = self.decode(z_c)
        rec_1 = F.cosine_similarity(x, x_hat, dim=1)
        rec_2 = (x - x_hat).norm(2, dim=1) / x.norm(2, dim=1)
        z = torch.cat([z_c, rec_1.unsqueeze(-1), rec_2.unsqueeze(-1)], dim=1)
        gamma = self.estimate(z)
        return z_c, x_hat, z, gamma


class ComputeLoss:
    def __init__(self, model, lambda_energy, lambda_cov, n_gmm):
        self.model = model
        self.lambda_energy = lambda_energy
        self.lambda_cov = lambda_cov
        self.n_gmm = n_gmm

    def forward(self, x, x_hat, z, gamma):
        reconst_loss = torch.mean((x - x_hat).pow(2))
        sample_energy, cov_diag = self.compute_energy(z, gamma)
        loss = reconst_loss + self.lambda_energy * sample_energy + self.lambda_cov * cov_diag
        return Variable(loss, requires_grad=True)  # expect: ADL034 (Variable(loss, requires_grad=True) returned by a method, backward and step in the caller)

    def compute_energy(self, z, gamma):
        phi, mu, cov = self.compute_params(z, gamma)
        z_mu = z.unsqueeze(1) - mu.unsqueeze(0)
        eps = 1e-6
        cov_inverse, det_cov, cov_diag = [], [], 0
        for k in range(self.n_gmm):
            cov_k = cov[k] + torch.eye(cov[k].size(-1)) * eps
            cov_inverse.append(torch.inverse(cov_k).unsqueeze(0))
            det_cov.append(torch.det(cov_k * (2 * torch.pi)).unsqueeze(0))
            cov_diag += torch.sum(1 / cov_k.diag())
        cov_inverse = torch.cat(cov_inverse, dim=0)
        det_cov = torch.cat(det_cov)
        E_z = -0.5 * torch.sum(torch.sum(z_mu.unsqueeze(-1) * cov_inverse.unsqueeze(0), dim=-2) * z_mu, dim=-1)
        E_z = torch.exp(E_z)
        E_z = -torch.log(torch.sum(phi.unsqueeze(0) * E_z / torch.sqrt(det_cov).unsqueeze(0), dim=1) + eps)
        return torch.mean(E_z), cov_diag

    def compute_params(self, z, gamma):
        phi = torch.sum(gamma, dim=0) / gamma.size(0)
        mu = torch.sum(z.unsqueeze(1) * gamma.unsqueeze(-1), dim=0) / torch.sum(gamma, dim=0).unsqueeze(-1)
        z_mu = z.unsqueeze(1) - mu.unsqueeze(0)
        z_mu_z_mu_t = z_mu.unsqueeze(-1) * z_mu.unsqueeze(-2)
        cov = torch.sum(gamma.unsqueeze(-1).unsqueeze(-1) * z_mu_z_mu_t, dim=0)
        cov = cov / torch.sum(gamma, dim=0).unsqueeze(-1).unsqueeze(-1)
        return phi, mu, cov


class TrainerDAGMM:
    def __init__(self, train_loader, num_epochs=1, lr=1e-3):
        self.train_loader = train_loader
        self.num_epochs = num_epochs
        self.lr = lr

    def train(self, grads=None):
        self.model = DAGMM()
        optimizer = optim.Adam(self.model.parameters(), lr=self.lr)
        self.compute = ComputeLoss(self.model, 0.1, 0.005, 2)
        self.model.train()
        for epoch in range(self.num_epochs):
            total_loss = 0
            for x, _ in self.train_loader:
                optimizer.zero_grad()
                _, x_hat, z, gamma = self.model(x)
                loss = self.compute.forward(x, x_hat, z, gamma)
                loss.backward(retain_graph=True)
                if grads is not None:
                    grads.append([p.grad for p in self.model.parameters()])
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5)
                optimizer.step()
                total_loss += loss.item()
        return total_loss


def run(grads=None):
    torch.manual_seed(0)
    loader = [(torch.rand(8, 6), torch.zeros(8)) for _ in range(2)]
    TrainerDAGMM(loader).train(grads)


def bug_shows():
    grads = []
    run(grads)
    return all(g is None for g in grads[0])
