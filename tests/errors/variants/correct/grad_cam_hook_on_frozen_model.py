import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
head = nn.Linear(8, 3)
for module in (backbone, head):
    for parameter in module.parameters():
        parameter.requires_grad_(False)

image = torch.randn(1, 6)
gradients = {}
features = backbone(image.requires_grad_())
features.register_hook(lambda grad: gradients.update(features=grad))  # PRIMARY
score = head(features)[0, 2]
score.backward()
cam = torch.relu(gradients["features"] * features).sum(-1)
