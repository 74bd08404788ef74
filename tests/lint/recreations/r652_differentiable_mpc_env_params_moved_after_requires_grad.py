"""differentiable-mpc's imitation experiment in `--mode sysid` learns the
pendulum's physical parameters: `IL_Exp.__init__` makes them with
`torch.tensor((15., 3., 0.5), requires_grad=True)` and then moves them with
`self.env_params = self.env_params.to(self.device)`.  The moved tensor is a
non-leaf copy, so `optim.RMSprop([{'params': self.env_params, ...}])` in
`run()` raises "ValueError: can't optimize a non-leaf Tensor".  Re-created as
the experiment class (constructor choosing the parameters per environment,
the dynamics, `run()` building the optimizer and fitting the next states);
the move goes to the experiment's device and dtype (float64 here), so on the
CPU `.to()` copies as the CUDA move did.
Buggy line: `self.env_params = self.env_params.to(self.device, self.dtype)`.
Source: https://github.com/locuslab/differentiable-mpc/issues/5"""
import torch
from torch import optim


class PendulumDx(torch.nn.Module):
    def __init__(self, params, dt=0.05):
        super().__init__()
        self.params = params
        self.dt = dt

    def forward(self, x, u):
        g, m, l = torch.unbind(self.params)
        th, dth = torch.unbind(x, dim=1)
        ddth = -3. * g / (2. * l) * torch.sin(th + 3.14159) + 3. * u[:, 0] / (m * l ** 2)
        new_dth = dth + self.dt * ddth
        return torch.stack((th + self.dt * new_dth, new_dth), dim=1)


class IL_Exp:
    def __init__(self, env_name='pendulum', mode='sysid', learn_dx=True, device='cpu', dtype=torch.float64):
        self.env_name, self.mode, self.learn_dx = env_name, mode, learn_dx
        self.device, self.dtype = device, dtype
        self.true_dx = PendulumDx(torch.tensor((10., 1., 1.), dtype=dtype))
        if self.mode in ['empc', 'sysid']:
            if self.learn_dx:
                if self.env_name == 'pendulum':
                    self.env_params = torch.tensor((15., 3., 0.5), requires_grad=True)
                elif self.env_name == 'cartpole':
                    self.env_params = torch.tensor((9.8, 3.0, 0.1, 1.0), requires_grad=True)
                else:
                    assert False
            else:
                self.env_params = self.true_dx.params
            self.env_params = self.env_params.to(self.device, self.dtype)  # missed: ADL020

    def run(self, n_epoch=2):
        params = [{'params': self.env_params, 'lr': 1e-2, 'alpha': 0.5}]
        opt = optim.RMSprop(params)
        xs = torch.randn(32, 2, dtype=self.dtype)
        us = torch.randn(32, 1, dtype=self.dtype)
        next_x = self.true_dx(xs, us)
        for _ in range(n_epoch):
            dx = PendulumDx(self.env_params)
            sysid_loss = (next_x.detach() - dx(xs, us)).pow(2).mean()
            opt.zero_grad()
            sysid_loss.backward()
            opt.step()


def run():
    torch.manual_seed(0)
    exp = IL_Exp()
    exp.run()
