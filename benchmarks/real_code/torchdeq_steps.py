"""A small deep-equilibrium model trained for a few steps with torchdeq, one configuration each:
implicit differentiation as an autograd.Function and as a tensor backward hook (the hook removes
itself and solves the backward fixed point), phantom gradients over several sampled states with
fixed-point correction, the sliced core; Anderson and Broyden solvers, weight and spectral norm
re-applied each step (reset_norm), variational dropout, a Jacobian regularisation term with
create_graph. Prints losses and checksums."""
import torch
from torch import nn
from torchdeq import get_deq, reset_deq
from torchdeq.norm import apply_norm
from torchdeq.dropout import VariationalDropout
from torchdeq.loss import fp_correction, jac_reg


class DEQNet(nn.Module):
    def __init__(self, config, norm_type):
        super().__init__()
        self.encode = nn.Linear(4, 16)
        self.inject = nn.Linear(16, 16)
        self.layer = nn.Linear(16, 16, bias=False)
        self.drop = VariationalDropout(0.1)
        self.decode = nn.Linear(16, 1)
        apply_norm(self, norm_type=norm_type, filter_out=['encode', 'decode'])
        self.deq = get_deq(config)

    def forward(self, x):
        injection = self.inject(torch.tanh(self.encode(x)))
        f = lambda z: self.drop(torch.tanh(self.layer(z) + injection))
        z_out, info = self.deq(f, torch.zeros_like(injection))
        return [self.decode(z) for z in z_out], z_out[-1], f


configs = [
    dict(core='indexing', ift=True, f_solver='anderson', b_solver='anderson', f_max_iter=20, b_max_iter=20),
    dict(core='indexing', ift=True, hook_ift=True, f_solver='fixed_point_iter', b_solver='fixed_point_iter', f_max_iter=20, b_max_iter=20),
    dict(core='indexing', grad=3, n_states=2, f_solver='broyden', f_max_iter=12),
    dict(core='sliced', grad=2, n_states=2, f_solver='fixed_point_iter', f_max_iter=12),
]
for number, config in enumerate(configs):
    for norm_type in ('weight_norm', 'spectral_norm'):
        torch.manual_seed(0)
        model = DEQNet(config, norm_type)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for step in range(4):
            x = torch.randn(32, 4)
            y = torch.sin(x.sum(dim=1, keepdim=True))
            reset_deq(model)
            predictions, z_star, f = model(x)
            loss, values = fp_correction(nn.MSELoss(), (predictions, y), return_loss_values=True)
            if number == 0:  # the Jacobian term needs a differentiable f(z*) at the fixed point
                z = z_star.detach().requires_grad_()
                loss = loss + 0.1 * jac_reg(f(z), z)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(number, norm_type, step, f'{loss.item():.8f}', [f'{v:.6f}' for v in values])
        model.eval()
        with torch.no_grad():
            test = model(torch.randn(8, 4))[0][-1]
        print(number, norm_type, 'checksum', f'{sum(p.double().sum().item() for p in model.parameters()):.8f}', f'{test.sum().item():.8f}')
