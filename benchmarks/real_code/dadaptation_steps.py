"""D-Adaptation (facebookresearch/dadaptation) training small models for a few steps on CPU, for
docs/real-code.md: the project has no tests, so this driver runs its optimizers. They estimate the
distance to the solution from the gradients seen so far and write the parameters in place through
`p.data` (`add_`, `addcdiv_`, `copy_` from a kept initial point `x0`); DAdaptAdaGrad also takes
sparse gradients (`sparse_mask`, `sparse_coo_tensor`). Runs DAdaptSGD (momentum), DAdaptAdam
(coupled and decoupled decay, bias correction), DAdaptAdaGrad, DAdaptAdan, DAdaptLion and the two
experimental ones on an MLP with a closure every other step (not for the Adan ones: their
`step()` calls the closure under `torch.no_grad()`, so backward() fails in it, with or without the doctor), and DAdaptAdaGrad on a sparse and a
dense embedding. Seeded; prints losses, the optimizers' step-size estimate `d` and checksums."""
import torch
from torch import nn
import dadaptation
from dadaptation.experimental import DAdaptAdamPreprint, DAdaptAdanIP


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


torch.manual_seed(0)
x = torch.randn(64, 8)
y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
tokens = torch.randint(0, 50, (64, 5))
labels = torch.randint(0, 3, (64,))

configurations = {
    'sgd-momentum': (dadaptation.DAdaptSGD, dict(momentum=0.9)),
    'sgd-decay': (dadaptation.DAdaptSGD, dict(weight_decay=1e-3)),
    'adam': (dadaptation.DAdaptAdam, dict()),
    'adam-decoupled-bias-correction': (dadaptation.DAdaptAdam, dict(weight_decay=1e-2, decouple=True, use_bias_correction=True)),
    'adagrad-momentum': (dadaptation.DAdaptAdaGrad, dict(momentum=0.9, weight_decay=1e-3)),
    'adan': (dadaptation.DAdaptAdan, dict()),
    'adan-no-prox': (dadaptation.DAdaptAdan, dict(no_prox=True)),
    'lion': (dadaptation.DAdaptLion, dict(weight_decay=1e-3)),
    'adam-preprint': (DAdaptAdamPreprint, dict()),
    'adan-ip': (DAdaptAdanIP, dict()),
}
for name, (optimizer_class, options) in configurations.items():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = optimizer_class(model.parameters(), **options)

    def closure():
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    for step in range(20):
        if step % 2 and 'adan' not in name:
            # Adan's step() runs under @torch.no_grad() and calls the closure there: no closure for it
            loss = optimizer.step(closure)  # the closure re-evaluates the loss inside step()
        else:
            loss = closure()
            optimizer.step()
        print(name, step, f'{loss.item():.8f}', f"d={optimizer.param_groups[0]['d']:.6e}")
    print(name, 'checksum', checksum(model))

for name in ('adagrad-sparse', 'adagrad-dense-embedding'):
    torch.manual_seed(2)
    embedding = nn.Embedding(50, 6, sparse=name.endswith('sparse'))
    head = nn.Linear(6, 3)
    optimizers = [dadaptation.DAdaptAdaGrad(embedding.parameters()), dadaptation.DAdaptAdaGrad(head.parameters())]
    for step in range(6):
        loss = nn.functional.cross_entropy(head(embedding(tokens).mean(1)), labels)
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
        print(name, step, f'{loss.item():.8f}')
    print(name, 'checksum', checksum(embedding), checksum(head))
