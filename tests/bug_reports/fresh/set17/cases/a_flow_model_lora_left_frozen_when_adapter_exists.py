"""Fine-tuning a conditional flow-matching image model with LoRA (X-GenGroup/Flow-Factory,
apply_lora()): the trainer first freezes every component, then calls `apply_lora()`, which adds
an adapter to each component and marks its weights trainable. For a component that already carried
an adapter of that name (a LoRA loaded and fused before, or a resumed run), apply_lora() logged
"Skipping" and went on to the next component, so that adapter's weights stayed frozen. The
optimizer holds them, they never get a gradient, and only the other component's adapter trains.
Nothing is raised.
Source: https://github.com/X-GenGroup/Flow-Factory/pull/56 ("Fix frozen LoRA parameters when
adapter already exists": the training "failed to learn anything"; merged fix: when the adapter
exists, make its parameters require grad again instead of skipping).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM, COND, RANK, BATCH = 8, 4, 2, 16


class LoRALinear(nn.Module):
    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features) * 0.1)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x):
        return self.base(x) + x @ self.lora_A.t() @ self.lora_B.t()


class Component(nn.Module):
    def __init__(self, inputs, hidden, outputs):
        super().__init__()
        self.inp = nn.Linear(inputs, hidden)
        self.out = nn.Linear(hidden, outputs)
        self.adapters = set()

    def forward(self, x):
        return self.out(F.silu(self.inp(x)))


def freeze_components(components):
    for component in components.values():
        component.requires_grad_(False)


def apply_lora(components, name="default"):
    for key, component in components.items():
        if name in component.adapters:
            print(f"{key}: adapter {name!r} already exists, skipping")
            continue
        component.inp, component.out = LoRALinear(component.inp, RANK), LoRALinear(component.out, RANK)
        for layer in (component.inp, component.out):
            layer.lora_A.requires_grad_(True)
            layer.lora_B.requires_grad_(True)
        component.adapters.add(name)
    return components


def flow_matching_loss(components, x1, labels):
    x0 = torch.randn_like(x1)
    t = torch.rand(x1.shape[0], 1)
    xt = (1 - t) * x0 + t * x1
    velocity = components["transformer"](torch.cat([xt, t, components["condition"](labels)], dim=1))
    return F.mse_loss(velocity, x1 - x0)


components = {"transformer": Component(DIM + 1 + COND, 32, DIM), "condition": Component(3, 8, COND)}
apply_lora({"transformer": components["transformer"]})  # the first LoRA, trained earlier and kept
with torch.no_grad():
    components["transformer"].inp.lora_B.normal_(std=0.05)

freeze_components(components)
apply_lora(components)
trainable = [p for c in components.values() for n, p in c.named_parameters() if "lora_" in n]
optimizer = torch.optim.AdamW(trainable, lr=1e-2)

data = torch.randn(BATCH, DIM) * 0.5 + 1.0
labels = F.one_hot(torch.arange(BATCH) % 3, 3).float()
losses = []
for step in range(5):
    torch.manual_seed(10 + step)
    optimizer.zero_grad()
    loss = flow_matching_loss(components, data, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for c in components.values() for p in c.parameters()]}
