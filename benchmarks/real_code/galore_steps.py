"""GaLore (jiaweizzhao/GaLore, the package galore_torch) training a small transformer for a few steps
on CPU, for docs/real-code.md: the project has no tests, and its training script needs C4 and a GPU.
GaLore's optimizers project each 2-D gradient onto a low-rank subspace (an SVD of the gradient every
`update_proj_gap` steps), keep Adam's or Adafactor's statistics there, project the update back and
write it into the parameter in place (`p.add_`). Runs GaLoreAdamW with each projection type (std,
reverse_std, left, right, full), GaLoreAdafactor with a fixed and a relative step, and the
script's per-layer mode: one optimizer per parameter, stepped and zeroed inside backward by a
`register_post_accumulate_grad_hook`, with a scheduler per parameter (GaLoreAdamW and torch's AdamW
where the script uses their 8-bit versions from bitsandbytes, not installed here). The package's
`__init__` imports bitsandbytes, so the driver imports the two modules it uses without it.
`--per-layer` runs the per-layer mode alone, as the training script runs it: its steps are then the
program's first. Seeded; prints losses and checksums."""
import importlib.util
import sys
import types

import torch
from torch import nn

# galore_torch/__init__.py imports adamw8bit, which needs bitsandbytes: load the package's modules without it
package = types.ModuleType('galore_torch')
package.__path__ = list(importlib.util.find_spec('galore_torch').submodule_search_locations)
sys.modules['galore_torch'] = package
from galore_torch.adamw import AdamW as GaLoreAdamW  # noqa: E402
from galore_torch.adafactor import Adafactor as GaLoreAdafactor  # noqa: E402


class TinyLanguageModel(nn.Module):
    def __init__(self, vocabulary=40, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        self.block = nn.TransformerEncoderLayer(width, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(width, vocabulary)

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        return self.head(self.block(self.embed(tokens), src_mask=mask, is_causal=True))


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


def parameter_groups(model, proj_type):
    """The training script's split: GaLore for the 2-D weights of attention and MLP layers, the rest plain."""
    galore = [p for name, p in model.named_parameters() if p.dim() == 2 and name.startswith('block.') and 'norm' not in name]
    ids = {id(p) for p in galore}
    regular = [p for p in model.parameters() if id(p) not in ids]
    return [{'params': regular}, {'params': galore, 'rank': 4, 'update_proj_gap': 3, 'scale': 0.25, 'proj_type': proj_type}]


torch.manual_seed(0)
tokens = torch.randint(0, 40, (8, 12))


def language_model_loss(model):
    logits = model(tokens[:, :-1])
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


configurations = {
    f'adamw-{proj_type}': lambda model, proj_type=proj_type: GaLoreAdamW(parameter_groups(model, proj_type), lr=1e-2, weight_decay=1e-3)
    for proj_type in ('std', 'reverse_std', 'left', 'right', 'full')
}
configurations['adafactor-fixed-lr'] = lambda model: GaLoreAdafactor(parameter_groups(model, 'std'), lr=1e-2, relative_step=False, scale_parameter=False)
configurations['adafactor-relative-step'] = lambda model: GaLoreAdafactor(parameter_groups(model, 'std'), beta1=0.9)
per_layer_only = '--per-layer' in sys.argv
for name, make_optimizer in configurations.items():
    if per_layer_only:
        break
    torch.manual_seed(1)
    model = TinyLanguageModel()
    optimizer = make_optimizer(model)
    for step in range(10):
        loss = language_model_loss(model)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(name, step, f'{loss.item():.8f}')
    print(name, 'checksum', checksum(model))

# the script's per-layer mode: each parameter's own optimizer steps inside backward, once its gradient is accumulated
torch.manual_seed(1)
model = TinyLanguageModel()
galore_ids = {id(p) for p in parameter_groups(model, 'std')[1]['params']}
optimizer_of, schedule_of = {}, {}
for p in model.parameters():
    if id(p) in galore_ids:
        optimizer_of[p] = GaLoreAdamW([{'params': [p], 'rank': 4, 'update_proj_gap': 6, 'scale': 0.25, 'proj_type': 'std'}], lr=1e-2)
    else:
        optimizer_of[p] = torch.optim.AdamW([p], lr=1e-2)
    schedule_of[p] = torch.optim.lr_scheduler.LambdaLR(optimizer_of[p], lambda step: min(1.0, (step + 1) / 4))


def optimizer_hook(p):
    if p.grad is None:
        return
    optimizer_of[p].step()
    optimizer_of[p].zero_grad()
    schedule_of[p].step()


for p in model.parameters():
    p.register_post_accumulate_grad_hook(optimizer_hook)
for step in range(10):
    loss = language_model_loss(model)
    loss.backward()
    print('per-layer', step, f'{loss.item():.8f}')
print('per-layer', 'checksum', checksum(model))
