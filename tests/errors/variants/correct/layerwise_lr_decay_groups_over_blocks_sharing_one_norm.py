# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 30
# trigger: a Lightning-like configure_optimizers builds one parameter group per block with a
#   layer-wise decayed learning rate; the blocks were built around one shared LayerNorm instance, so
#   its weight and bias are in every block's parameters()
# source: none found; the pattern as users write it (layer-wise learning-rate decay over blocks that
#   share a module)
# results: losses, model
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width, norm):
        super().__init__()
        self.norm = norm
        self.mlp = nn.Linear(width, width)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Tower(nn.Module):
    def __init__(self, width=6, depth=3):
        super().__init__()
        shared_norm = nn.LayerNorm(width)
        self.blocks = nn.ModuleList(Block(width, shared_norm) for _ in range(depth))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)

    def configure_optimizers(self, lr=0.1, decay=0.5):
        groups = [{"params": self.head.parameters(), "lr": lr}]
        seen = set()
        for depth, block in enumerate(reversed(self.blocks), start=1):
            params = [p for p in block.parameters() if id(p) not in seen]  # PRIMARY
            seen.update(id(p) for p in params)
            groups.append({"params": params, "lr": lr * decay ** depth})
        return torch.optim.SGD(groups)


torch.manual_seed(0)
model = Tower()
optimizer = model.configure_optimizers()
losses = []
for _ in range(3):
    x, y = torch.randn(5, 6), torch.randn(5, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
