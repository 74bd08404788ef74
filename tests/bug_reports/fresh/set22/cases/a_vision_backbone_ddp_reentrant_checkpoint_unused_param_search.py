"""Training a vision backbone with activation checkpointing under DistributedDataParallel
(huggingface/accelerate#389; microsoft/FocalNet#4 is the same report for a FocalNet backbone): each
block runs through `torch.utils.checkpoint.checkpoint(..., use_reentrant=True)` and the model is
wrapped with `find_unused_parameters=True`. The reentrant checkpoint runs each block's backward as
a backward of its own, DDP's hook of a block's parameter fires again there, and the first
backward() raises "Expected to mark a variable ready only once ... has been marked as ready
twice". The fix confirmed on the issue: `use_reentrant=False`. (Shown on one process, gloo.)
Source: https://github.com/huggingface/accelerate/issues/389
expect: raises"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

if not dist.is_initialized():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)

torch.manual_seed(0)

PATCH_DIM, DIM, CLASSES = 12, 16, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Backbone(nn.Module):
    def __init__(self, use_checkpoint=True):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.patch_embed = nn.Linear(PATCH_DIM, DIM)
        self.layers = nn.ModuleList([Block() for _ in range(2)])
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, patches):
        x = self.patch_embed(patches)
        for blk in self.layers:
            if self.use_checkpoint:
                x = checkpoint(blk, x, use_reentrant=True)
            else:
                x = blk(x)
        return self.head(x.mean(dim=1))


model = nn.parallel.DistributedDataParallel(Backbone(), find_unused_parameters=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
patches = torch.randn(8, 5, PATCH_DIM)
labels = torch.randint(0, CLASSES, (8,))

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(patches), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.module.parameters()]}
