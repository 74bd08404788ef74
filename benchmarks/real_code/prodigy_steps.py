"""Prodigy (konstmish/prodigy, the package prodigyopt) training small models for a few steps on CPU,
for docs/real-code.md: the project has no tests, so this driver runs its optimizers. Prodigy
estimates the distance to the solution from the gradients and the kept initial point `p0` and writes
the parameters in place through `p.data`; `slice_p` keeps only every n-th element of the statistics
(`p.data.flatten()[::slice_p]`). Runs Prodigy (default, coupled decay, bias correction with
safeguard warm-up, `beta3`, `d_coef`, `slice_p`) and the project's reference implementation on an MLP
and a small convolutional network, with a closure every other step, and a cosine schedule as the
README advises. Seeded; prints losses, the estimate `d` and checksums."""
import torch
from torch import nn
from prodigyopt import Prodigy
from prodigyopt.prodigy_reference import ProdigyReference


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


torch.manual_seed(0)
x = torch.randn(64, 8)
y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
images = torch.randn(16, 2, 6, 6)
labels = torch.randint(0, 4, (16,))

configurations = {
    'default': (Prodigy, dict()),
    'coupled-decay': (Prodigy, dict(weight_decay=1e-2, decouple=False)),
    'bias-correction-safeguard': (Prodigy, dict(use_bias_correction=True, safeguard_warmup=True, weight_decay=1e-3)),
    'beta3-dcoef': (Prodigy, dict(beta3=0.9, d_coef=0.5)),
    'slice': (Prodigy, dict(slice_p=3)),
    'reference': (ProdigyReference, dict(weight_decay=1e-3)),
}
for name, (optimizer_class, options) in configurations.items():
    for model_name in ('mlp', 'conv'):
        torch.manual_seed(1)
        if model_name == 'mlp':
            model, inputs, loss_of = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)), x, lambda out: nn.functional.mse_loss(out, y)
        else:
            model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 4))
            inputs, loss_of = images, lambda out: nn.functional.cross_entropy(out, labels)
        optimizer = optimizer_class(model.parameters(), **options)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20)

        def closure():
            optimizer.zero_grad()
            loss = loss_of(model(inputs))
            loss.backward()
            return loss

        for step in range(20):
            if step % 2:
                loss = optimizer.step(closure)
            else:
                loss = closure()
                optimizer.step()
            schedule.step()
            print(name, model_name, step, f'{loss.item():.8f}', f"d={optimizer.param_groups[0]['d']:.6e}")
        print(name, model_name, 'checksum', checksum(model))
