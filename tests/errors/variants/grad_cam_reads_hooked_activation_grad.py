# message: unsupported operand type(s) for *: 'NoneType' and 'Tensor' (after "The .grad attribute of
#   a Tensor that is not a leaf Tensor is being accessed")
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 6
# trigger: Grad-CAM keeps the feature map with a forward hook and reads its .grad after
#   backward(); the feature map is a layer's output, not a leaf, so its .grad is None
# source: none found; the pattern as users write it
# results: cam
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
activations = {}


def keep_features(module, inputs, output):
    activations["features"] = output  # PRIMARY


model[1].register_forward_hook(keep_features)
image = torch.randn(1, 6)
score = model(image)[0, 1]
score.backward()
features = activations["features"]
cam = torch.relu(features.grad * features).sum(-1)
