"""Dataset distillation: the synthetic images are created as
`torch.randn(..., requires_grad=True) * 0.01` and handed to the optimizer; the product is not a
leaf, so the optimizer refuses it.
Source: https://github.com/pytorch/pytorch/issues/140469 ("ValueError: can't optimize a non-leaf
Tensor"; answer: image_syn is the result of the randn multiplied by 0.01, no longer a leaf; create
the leaf first and scale it separately).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_classes, ipc = 3, 2
real_images = torch.randn(30, 8)
real_labels = torch.arange(30) % num_classes
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, num_classes))

image_syn = torch.randn(size=(num_classes * ipc, 8), dtype=torch.float, requires_grad=True) * 0.01
label_syn = torch.arange(num_classes).repeat_interleave(ipc)
optimizer_img = torch.optim.SGD([image_syn], lr=0.5, momentum=0.5)

losses = []
for it in range(5):
    g_real = torch.autograd.grad(F.cross_entropy(net(real_images), real_labels), net.parameters())
    g_syn = torch.autograd.grad(F.cross_entropy(net(image_syn), label_syn), net.parameters(), create_graph=True)
    loss = sum(((a - b) ** 2).sum() for a, b in zip(g_real, g_syn))
    optimizer_img.zero_grad()
    loss.backward()
    optimizer_img.step()
    losses.append(loss.detach())
result = {"losses": losses, "image_syn": image_syn.detach()}
