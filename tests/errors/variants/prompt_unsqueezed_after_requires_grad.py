# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 8
# trigger: a prompt-tuning class creates its soft prompt with requires_grad=True and then adds the
#   batch dimension with .unsqueeze(0) on the same line; the optimizer is given the unsqueezed
#   result, which is computed, not a leaf
# source: none found; the pattern as users write it (soft prompts for a frozen backbone)
# results: losses, tuner.prompt
import torch
from torch import nn
import torch.nn.functional as F


class PromptTuner:
    def __init__(self, backbone, length, width):
        self.backbone = backbone
        self.prompt = torch.zeros(length, width, requires_grad=True).unsqueeze(0)  # PRIMARY
        self.optimizer = torch.optim.Adam([self.prompt], lr=0.05)

    def step(self, x, y):
        self.optimizer.zero_grad()
        tokens = torch.cat([self.prompt.expand(x.shape[0], -1, -1), x], dim=1)
        loss = F.mse_loss(self.backbone(tokens).mean(1), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
backbone = nn.Linear(4, 2).requires_grad_(False)
tuner = PromptTuner(backbone, length=2, width=4)
x, y = torch.randn(3, 5, 4), torch.randn(3, 2)
losses = [tuner.step(x, y) for _ in range(2)]
