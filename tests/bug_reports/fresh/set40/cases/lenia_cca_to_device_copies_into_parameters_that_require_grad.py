"""A continuous cellular automaton (Lenia-style) library: the CA is an nn.Module whose update
rule is a genesis and a persistence function, each with learnable Gaussian parameters that the
CA also registers on itself (`include_parameters`). Restoring a saved configuration builds those
functions afresh, so their parameters require grad again. `no_grad()` is meant to freeze the
whole CA for simulation, but it only walks the weights layer and the genesis/persistence
modules it holds, not every parameter the CA registered; `to_device` then calls `no_grad()` and
moves each parameter in place, `param[:] = param.to(my_device)`, and the first registered
parameter that still requires grad raises "a leaf Variable that requires grad is being used in
an in-place operation". The user saw it right after `CCA(ca_config=...)` (here `to_device` is
called by the user before simulating). The change (the maintainer's commit for the issue):
`no_grad()` switches off every named parameter of the CA.
Source: https://github.com/riveSunder/yuca/issues/82
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Gaussian(nn.Module):
    def __init__(self, mu=0.15, sigma=0.015):
        super().__init__()
        self.mu = nn.Parameter(torch.tensor([mu]))
        self.sigma = nn.Parameter(torch.tensor([sigma]))

    def forward(self, x):
        return torch.exp(-((x - self.mu) ** 2) / (2 * self.sigma ** 2)) * 2 - 1


def ring_kernel(radius):
    coords = torch.arange(-radius, radius + 1, dtype=torch.float32)
    grid = torch.sqrt(coords[None, :] ** 2 + coords[:, None] ** 2) / radius
    kernel = torch.exp(-((grid - 0.5) ** 2) / (2 * 0.15 ** 2)) * (grid <= 1.0)
    return (kernel / kernel.sum())[None, None]


CONFIG = {"radius": 6, "dt": 0.1,
          "genesis": {"mu": 0.15, "sigma": 0.017}, "persistence": {"mu": 0.14, "sigma": 0.025}}


class CCA(nn.Module):
    def __init__(self, ca_config=None, device="cpu", use_grad=False):
        super().__init__()
        self.my_device = device
        self.use_grad = use_grad
        self.default_init()
        if ca_config is not None:
            self.load_config(ca_config)
        if not self.use_grad:
            self.no_grad()

    def default_init(self):
        self.dt = 0.1
        self.genesis_fns = [Gaussian()]
        self.persistence_fns = [Gaussian()]
        self.initialize_layers(radius=13)
        self.include_parameters()

    def initialize_layers(self, radius):
        self.kernel_radius = radius
        self.neighborhood_layer = nn.Conv2d(1, 1, 2 * radius + 1, padding=radius,
                                            padding_mode="circular", bias=False)
        self.weights_layer = nn.Conv2d(1, 1, 1, bias=False)
        for param in self.neighborhood_layer.parameters():
            param.requires_grad = False
            param[:] = ring_kernel(radius)
        for param in self.weights_layer.parameters():
            param.requires_grad = False
            param[:] = 1.0
            param.requires_grad = self.use_grad

    def load_config(self, config):
        self.genesis_fns = [Gaussian(**config["genesis"])]
        self.persistence_fns = [Gaussian(**config["persistence"])]
        self.dt = config["dt"]
        self.initialize_layers(radius=config["radius"])
        self.include_parameters()

    def include_parameters(self):
        for ii, genesis_fn in enumerate(self.genesis_fns):
            for jj, param in enumerate(genesis_fn.parameters()):
                self.register_parameter(f"gen_fn_{ii}_{jj}", nn.Parameter(param.detach().clone()))
        for kk, persistence_fn in enumerate(self.persistence_fns):
            for ll, param in enumerate(persistence_fn.parameters()):
                self.register_parameter(f"per_fn_{kk}_{ll}", nn.Parameter(param.detach().clone()))

    def no_grad(self):
        self.use_grad = False
        for param in self.weights_layer.parameters():
            param.requires_grad = False
        for genesis_fn in self.genesis_fns:
            for param in genesis_fn.parameters():
                param.requires_grad = False
        for persistence_fn in self.persistence_fns:
            for param in persistence_fn.parameters():
                param.requires_grad = False

    def to_device(self, my_device):
        """moves every parameter, also those registered by include_parameters"""
        self.no_grad()
        self.to(my_device)
        self.my_device = my_device
        for name, param in self.named_parameters():
            param[:] = param.to(my_device)

    def forward(self, universe):
        neighborhoods = self.neighborhood_layer(universe)
        genesis = self.genesis_fns[0](neighborhoods)
        persistence = self.persistence_fns[0](neighborhoods)
        update = self.weights_layer((1.0 - universe) * genesis + universe * persistence)
        return torch.clamp(universe + self.dt * update, 0.0, 1.0)


ca = CCA(ca_config=CONFIG)
ca.to_device("cpu")

universe = (torch.rand(1, 1, 48, 48) > 0.6).float()
with torch.no_grad():
    for step in range(20):
        universe = ca(universe)

result = {"universe": universe, "mass": universe.sum()}
