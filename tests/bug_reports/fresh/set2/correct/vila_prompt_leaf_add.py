"""Vision-language model: learnable prompt embeddings (a leaf that requires grad) get the image
features added in place with `+=`.
Source: https://github.com/NVlabs/VILA/pull/199 (fix: `text_embeds = text_embeds + (...)`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
vision_proj = nn.Linear(5, 4)
text_embeds = nn.Parameter(torch.randn(3, 4))
image_features = torch.randn(3, 5)

embeds = text_embeds + vision_proj(image_features)
loss = embeds.pow(2).sum()
loss.backward()
result = {"loss": loss.detach(), "w": vision_proj.weight.grad, "b": vision_proj.bias.grad}
