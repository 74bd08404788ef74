# message: cannot register a hook on a tensor that doesn't require gradient
# code: AD116 (catalogue: hook_no_grad)
# set: 6
# trigger: Grad-CAM on a classifier whose parameters were all frozen after training
#   (requires_grad_(False)); the hook that keeps the feature map's gradient is registered on
#   features that no longer require grad
# source: https://github.com/wtyhub/LPN/issues/6 (output.register_hook in a Grad-CAM script)
# results: cam
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
features = backbone(image)
features.register_hook(lambda grad: gradients.update(features=grad))  # PRIMARY
score = head(features)[0, 2]
score.backward()
cam = torch.relu(gradients["features"] * features).sum(-1)
