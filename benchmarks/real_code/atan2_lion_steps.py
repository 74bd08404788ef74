"""lucidrains' adam-atan2-pytorch and lion-pytorch optimizers training small models for a few steps on
CPU, for docs/real-code.md (adam-atan2-pytorch's three tests run on their own; lion-pytorch has none).
The optimizers write parameters in place under `torch.no_grad()` (`p.mul_`, `p.add_`, `lerp_`,
`torch._foreach_*`), keep copies of the initial parameters (regenerative regularisation), store
gradients under names and project later gradients orthogonally to them (`orthog_grad`), clip
toward grokking, orthogonalise updates by Newton-Schulz (Muon) and polar decompositions.
Runs each on an MLP and an embedding model, the orthogonal-gradient optimizer as its test does (a
first loss's gradient stored, a second loss's projected against it), and Lion's plain, cautious and
`_foreach` versions. Seeded; prints losses and checksums."""
import torch
from torch import nn
from adam_atan2_pytorch import AdamAtan2, AdamAtan2ClipGrok, AdoptAtan2, MuonAdamAtan2, PolarAdamAtan2
from adam_atan2_pytorch.adopt import Adopt
from adam_atan2_pytorch.foreach import AdamAtan2 as ForeachAdamAtan2
from adam_atan2_pytorch.adam_atan2_with_wasserstein_reg import AdamAtan2 as WassersteinAdamAtan2
from adam_atan2_pytorch.adam_atan2_with_orthog_grad import AdamAtan2 as OrthogonalGradientAdamAtan2
from lion_pytorch import Lion
from lion_pytorch.cautious_lion import Lion as CautiousLion
from lion_pytorch.foreach import Lion as ForeachLion


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


torch.manual_seed(0)
x = torch.randn(64, 8)
y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
tokens = torch.randint(0, 30, (32, 6))
labels = torch.randint(0, 4, (32,))


def matrices_and_rest(model):
    matrices = [p for p in model.parameters() if p.dim() == 2]
    return matrices, [p for p in model.parameters() if p.dim() != 2]


configurations = {
    'adam-atan2': lambda model: AdamAtan2(model.parameters(), lr=1e-2),
    'adam-atan2-regen-cautious': lambda model: AdamAtan2(model.parameters(), lr=1e-2, regen_reg_rate=1e-2, cautious_factor=0.),
    'adam-atan2-decoupled-cautious-wd': lambda model: AdamAtan2(model.parameters(), lr=1e-2, weight_decay=0.1, decoupled_wd=True, cautious_wd=True),
    'adam-atan2-clip-grok': lambda model: AdamAtan2ClipGrok(model.parameters(), lr=1e-2, weight_decay=1e-2),
    'adopt-atan2': lambda model: AdoptAtan2(model.parameters(), lr=1e-2, regen_reg_rate=1e-2),
    'adopt': lambda model: Adopt(model.parameters(), lr=1e-2, weight_decay=1e-2),
    'adam-atan2-foreach': lambda model: ForeachAdamAtan2(model.parameters(), lr=1e-2, weight_decay=1e-2),
    'adam-atan2-wasserstein': lambda model: WassersteinAdamAtan2(model.parameters(), lr=1e-2, regen_reg_rate=1e-2),
    'muon-adam-atan2': lambda model: MuonAdamAtan2(*matrices_and_rest(model), lr=1e-2),
    'polar-adam-atan2': lambda model: PolarAdamAtan2(*matrices_and_rest(model), lr=1e-2),
    'lion': lambda model: Lion(model.parameters(), lr=1e-3, weight_decay=1e-2),
    'lion-decoupled': lambda model: Lion(model.parameters(), lr=1e-3, weight_decay=1e-2, decoupled_weight_decay=True),
    'lion-cautious': lambda model: CautiousLion(model.parameters(), lr=1e-3, weight_decay=1e-2),
    'lion-foreach': lambda model: ForeachLion(model.parameters(), lr=1e-3, weight_decay=1e-2),
}
for name, make_optimizer in configurations.items():
    for model_name in ('mlp', 'embedding'):
        torch.manual_seed(1)
        if model_name == 'mlp':
            model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))
            loss_of = lambda: nn.functional.mse_loss(model(x), y)
        else:
            model = nn.Sequential(nn.Embedding(30, 8), nn.Flatten(), nn.LayerNorm(48), nn.Linear(48, 4))
            loss_of = lambda: nn.functional.cross_entropy(model(tokens), labels)
        optimizer = make_optimizer(model)
        for step in range(10):
            loss = loss_of()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(name, model_name, f'{loss.item():.8f}', checksum(model))

# the orthogonal-gradient optimizer as its test uses it: a reinforcement loss's gradient stored, an auxiliary loss's projected against it
torch.manual_seed(2)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = OrthogonalGradientAdamAtan2(model.parameters(), lr=1e-2, orthog_grad=True)
for step in range(8):
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step(store_grad_key='rl_grad', orthog_against_key=None)
    optimizer.zero_grad()
    auxiliary = model(x).pow(2).mean()
    auxiliary.backward()
    optimizer.step(store_grad_key=None, orthog_against_key='rl_grad')
    print('orthogonal-gradient', step, f'{auxiliary.item():.8f}')
print('orthogonal-gradient checksum', checksum(model))
