"""MADGRAD and MirrorMADGRAD (facebookresearch/madgrad) training small models for a few steps on CPU.
The project's own tests call `.cuda()` throughout, so this driver runs its optimizers instead:
dual averaging that writes the parameters in place through `p.data` (`copy_`, `addcdiv_`,
`lerp`-like `mul_`/`add_`), coupled and decoupled weight decay, momentum 0.9 and 0, a closure
that re-evaluates the loss, and sparse gradients (an `nn.Embedding(sparse=True)` stepped with
momentum 0, MADGRAD's `sparse_mask` branch). Prints losses and checksums."""
import torch
from torch import nn
from madgrad import MADGRAD, MirrorMADGRAD


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


torch.manual_seed(0)
x = torch.randn(64, 8)
y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
tokens = torch.randint(0, 50, (64, 5))
labels = torch.randint(0, 3, (64,))

configurations = {
    'madgrad': (MADGRAD, dict(lr=1e-2)),
    'madgrad-decay': (MADGRAD, dict(lr=1e-2, weight_decay=1e-3)),
    'madgrad-decoupled-nomomentum': (MADGRAD, dict(lr=1e-2, momentum=0.0, weight_decay=1e-2, decouple_decay=True)),
    'mirror': (MirrorMADGRAD, dict(lr=1e-2)),
    'mirror-decay': (MirrorMADGRAD, dict(lr=1e-2, weight_decay=1e-3, decouple_decay=True)),
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

    for step in range(6):
        if step % 2:
            loss = optimizer.step(closure)  # the closure re-evaluates the loss inside step()
        else:
            loss = closure()
            optimizer.step()
        print(name, step, f'{loss.item():.8f}')
    print(name, 'checksum', checksum(model))

for name, optimizer_class in (('madgrad-sparse', MADGRAD), ('madgrad-dense-embedding', MADGRAD)):
    torch.manual_seed(2)
    embedding = nn.Embedding(50, 6, sparse=name.endswith('sparse'))
    head = nn.Linear(6, 3)
    optimizers = [optimizer_class(embedding.parameters(), lr=5e-2, momentum=0.0), MADGRAD(head.parameters(), lr=5e-2)]
    for step in range(6):
        loss = nn.functional.cross_entropy(head(embedding(tokens).mean(1)), labels)
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
        print(name, step, f'{loss.item():.8f}')
    print(name, 'checksum', checksum(embedding), checksum(head))
