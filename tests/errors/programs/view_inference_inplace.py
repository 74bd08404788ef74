import torch

buffer = torch.zeros(4)
with torch.inference_mode():  # INFERENCE
    window = buffer[:2]  # VIEW
w = torch.ones(2, requires_grad=True)
window.add_(w)  # PRIMARY
