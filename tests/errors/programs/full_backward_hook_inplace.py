import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(inplace=True), nn.Linear(6, 2))
kept = {}


def keep_output_gradient(module, grad_input, grad_output):
    kept["gradient"] = grad_output[0]


model[0].register_full_backward_hook(keep_output_gradient)  # PRIMARY
x = torch.randn(3, 4)
model(x).pow(2).sum().backward()
