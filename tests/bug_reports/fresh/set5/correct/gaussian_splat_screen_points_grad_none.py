"""Gaussian splatting densification: the projected 2D means (`xys`) are computed from the 3D means
in the forward pass, and after `backward()` the densification step reads `self.xys.grad` to find
Gaussians with large screen-space gradients; `xys` is not a leaf, so its `.grad` is None.
Source: https://github.com/nerfstudio-project/nerfstudio/issues/2656 ("The .grad attribute of a
Tensor that is not a leaf Tensor is being accessed", then `self.xys.grad.detach()` fails; the
warning's advice: `.retain_grad()` on the non-leaf tensor).
expect: raises"""
import torch


class Splats(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.means = torch.nn.Parameter(torch.randn(10, 3))
        self.colors = torch.nn.Parameter(torch.rand(10, 3))
        self.grad_norm_accum = torch.zeros(10)

    def forward(self, camera):
        projected = self.means @ camera
        self.xys = projected[:, :2] / (projected[:, 2:].abs() + 1.0)
        self.xys.retain_grad()
        weights = torch.exp(-(self.xys ** 2).sum(-1, keepdim=True))
        return (weights * self.colors).sum(0)

    def after_backward(self):
        grads = self.xys.grad.detach().norm(dim=-1)
        self.grad_norm_accum += grads


model = Splats()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
target = torch.tensor([0.5, 0.2, 0.7])
losses = []
for step in range(3):
    camera = torch.eye(3) + 0.1 * step
    loss = ((model(camera) - target) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    model.after_backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "accum": model.grad_norm_accum.clone(), "means": model.means.detach()}
