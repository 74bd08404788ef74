import torch

with torch.inference_mode():  # INFERENCE
    weights = torch.ones(3)
weights.requires_grad_()  # PRIMARY
