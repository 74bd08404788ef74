import torch

with torch.inference_mode():  # INFERENCE
    running = torch.zeros(3)
running += torch.ones(3)  # PRIMARY
