"""A small Langevin-dynamics sampling library (stochastic-gradient Langevin dynamics with an
RMSprop-style preconditioner, "pSGLD"): the chain's state `x` is a tensor that requires grad, the
sampler hands it to its own optimizer, and each `sample()` call evaluates the negative
log-density, calls `backward()` and `optim.step()`, which takes a preconditioned gradient step and
adds Gaussian noise. `sample()` never clears `x.grad`, so from the second step on every update uses
the sum of all the gradients seen so far: the chain does not sample the target density (here the
samples lose the target's correlation, their covariance comes out nearly diagonal).
Source: https://github.com/alisiahkoohi/Langevin-dynamics/issues/1 ("Didn't zero the gradient in
the optimizer ... you never run `self.optim.zero_grad()`"; the maintainer: "Good catch! I will
update it.", and `LangevinDynamics.sample()` now starts with `self.optim.zero_grad()`)
expect: silent"""
import torch

torch.manual_seed(0)


class pSGLD(torch.optim.Optimizer):
    """Preconditioned SGLD: an RMSprop-scaled gradient step plus matching Gaussian noise."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-5):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["square_avg"] = torch.zeros_like(p)
                square_avg = state["square_avg"]
                square_avg.mul_(group["alpha"]).addcmul_(p.grad, p.grad, value=1 - group["alpha"])
                precond = 1.0 / (square_avg.sqrt() + group["eps"])
                p.addcmul_(precond, p.grad, value=-group["lr"])
                p.add_(torch.randn_like(p) * (2.0 * group["lr"] * precond).sqrt())


class LangevinDynamics:
    def __init__(self, x, func, lr=1e-2, lr_final=1e-4, max_itr=400):
        self.x = x
        self.optim = pSGLD([self.x], lr)
        self.func = func
        self.lr_fn = self.decay_fn(lr, lr_final, max_itr)
        self.counter = 0.0

    def sample(self):
        self.lr_decay()
        self.optim.zero_grad()
        loss = self.func(self.x)
        loss.backward()
        self.optim.step()
        self.counter += 1
        return self.x.detach().clone(), loss.item()

    @staticmethod
    def decay_fn(lr, lr_final, max_itr, gamma=-0.55):
        b = max_itr / ((lr_final / lr) ** (1 / gamma) - 1.0)
        a = lr / (b ** gamma)
        return lambda t: a * ((b + t) ** gamma)

    def lr_decay(self):
        for group in self.optim.param_groups:
            group["lr"] = self.lr_fn(self.counter)


# Target: a correlated two-dimensional Gaussian, given by its negative log-density.
mean = torch.tensor([1.0, -0.5])
precision = torch.linalg.inv(torch.tensor([[1.0, 0.6], [0.6, 0.8]]))


def neg_log_density(x):
    d = x - mean
    return 0.5 * d @ precision @ d


x = torch.zeros(2, requires_grad=True)
sampler = LangevinDynamics(x, neg_log_density, lr=3e-1, lr_final=3e-2, max_itr=400)
samples, energies = [], []
for _ in range(400):
    state, energy = sampler.sample()
    samples.append(state)
    energies.append(energy)

samples = torch.stack(samples)
result = {"samples": samples, "energies": torch.tensor(energies),
          "posterior_mean": samples[100:].mean(0), "posterior_cov": samples[100:].T.cov()}
