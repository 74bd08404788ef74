"""Diffusion inpainting by optimizing the initial noise: the host application (a node graph)
turns gradients off for the whole process with `torch.set_grad_enabled(False)` before it runs
the user's node, so the noise-optimization loss has no graph.
Source: https://github.com/ubc-vision/sonic/issues/2 ("element 0 of tensors does not require grad
and does not have a grad_fn"; "a node in my comfyUI env set a global torch.no_grad()"; fixed by
re-enabling gradients around the optimization).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
denoiser = nn.Sequential(nn.Linear(12, 24), nn.SiLU(), nn.Linear(24, 12))
for p in denoiser.parameters():
    p.requires_grad_(False)
image = torch.randn(4, 12)
known = (torch.rand(4, 12) > 0.4).float()


def host_prepare():
    # what the host does before it calls any node: inference only
    torch.set_grad_enabled(False)


@torch.enable_grad()
def inpaint_node(steps=5):
    epsilon = torch.randn(4, 12, requires_grad=True)
    optimizer = torch.optim.Adam([epsilon], lr=0.05)
    losses = []
    for _ in range(steps):
        sample = denoiser(epsilon)
        loss = (((sample - image) * known) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return epsilon.detach(), losses


host_prepare()
epsilon, losses = inpaint_node()
result = {"epsilon": epsilon, "losses": losses}
