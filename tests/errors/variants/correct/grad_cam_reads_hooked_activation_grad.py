import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
activations = {}


def keep_features(module, inputs, output):
    output.retain_grad()
    activations["features"] = output  # PRIMARY


model[1].register_forward_hook(keep_features)
image = torch.randn(1, 6)
score = model(image)[0, 1]
score.backward()
features = activations["features"]
cam = torch.relu(features.grad * features).sum(-1)
