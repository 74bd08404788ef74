"""FGSM: the image tensor made with requires_grad=True and then unsqueezed is not a leaf, so
`orig_img.grad` is None after backward and `.grad.data` fails.
Source: https://github.com/anishmadan23/adversarial-attacks-pytorch/issues/1
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3))
pixels = torch.rand(3, 2, 2)
label = torch.tensor([1])
epsilon = 0.05

orig_img = torch.tensor(pixels, requires_grad=True).unsqueeze(0)
loss = F.cross_entropy(model(orig_img), label)
loss.backward()
img_grad = torch.sign(orig_img.grad.data)
adv_img = orig_img.data + epsilon * img_grad
result = {"loss": loss.detach(), "adv": adv_img}
