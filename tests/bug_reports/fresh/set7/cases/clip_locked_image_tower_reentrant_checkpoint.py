"""Contrastive image-text fine-tuning (CLIP-style) with gradient checkpointing: the image tower is
locked (run without gradients), and the trainable transformer blocks on top of it are checkpointed
with the reentrant `torch.utils.checkpoint` (`use_reentrant=True`); none of the checkpointed
blocks' inputs requires grad, so their outputs do not either and the blocks' weights get no
gradient (only a warning "None of the inputs have requires_grad=True"; the text side still trains,
so backward runs).
Source: https://github.com/mlfoundations/open_clip/issues/573 ("None of the inputs have
requires_grad=True. Gradients will be None" at training start; passing `use_reentrant=False` to the
checkpoint calls made the warning go away and improved train/val loss and retrieval).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
DIM = 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))

    def forward(self, x):
        return x + self.mlp(x)


class VisionTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Linear(12, DIM)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, patches):
        with torch.no_grad():
            x = self.patch_embed(patches)
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=True)
        return self.proj(x.mean(1))


vision = VisionTower()
vision.patch_embed.requires_grad_(False)
text = nn.EmbeddingBag(50, DIM)
logit_scale = nn.Parameter(torch.tensor(2.0))
params = [p for p in vision.parameters() if p.requires_grad] + list(text.parameters()) + [logit_scale]
optimizer = torch.optim.AdamW(params, lr=1e-2)
losses = []
for step in range(3):
    patches, tokens = torch.randn(6, 4, 12), torch.randint(0, 50, (6, 5))
    image_features = F.normalize(vision(patches), dim=-1)
    text_features = F.normalize(text(tokens), dim=-1)
    logits = logit_scale.exp() * image_features @ text_features.t()
    labels = torch.arange(6)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "blocks": [p.detach().clone() for p in vision.blocks.parameters()]}
