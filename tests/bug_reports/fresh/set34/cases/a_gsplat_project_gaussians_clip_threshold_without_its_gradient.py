"""gsplat (nerfstudio-project/gsplat), gsplat/project_gaussians.py: `project_gaussians(...)` gained
a `clip_thresh` argument (gaussians nearer the camera than it are culled), passed on to the
custom `torch.autograd.Function` `_ProjectGaussians.forward(ctx, means3d, scales, glob_scale,
quats, viewmat, projmat, fx, fy, cx, cy, img_height, img_width, tile_bounds, clip_thresh)`.
The backward still returned one gradient per old input, so fitting a scene with a custom
`clip_threshold` failed in `loss.backward()`: "function ProjectGaussiansBackward returned an
incorrect number of gradients (expected 14, got 13)". The reporter's fix, taken upstream:
`backward` returns one more `None`, for `clip_thresh`.
Source: https://github.com/nerfstudio-project/gsplat/issues/76
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def _project(means3d, scales, glob_scale, viewmat, fx, fy, cx, cy, clip_thresh):
    p_view = means3d @ viewmat[:3, :3].T + viewmat[:3, 3]
    depths = p_view[:, 2]
    visible = depths > clip_thresh
    safe_z = torch.where(visible, depths, torch.ones_like(depths))
    xys = torch.stack([fx * p_view[:, 0] / safe_z + cx, fy * p_view[:, 1] / safe_z + cy], dim=-1)
    radii = 3.0 * glob_scale * scales.max(dim=-1).values * fx / safe_z
    xys = torch.where(visible[:, None], xys, torch.zeros_like(xys))
    radii = torch.where(visible, radii, torch.zeros_like(radii))
    return xys, depths, radii


class _ProjectGaussians(torch.autograd.Function):
    """Project 3D gaussians to 2D (the CUDA kernel's arithmetic, in plain torch)."""

    @staticmethod
    def forward(ctx, means3d, scales, glob_scale, quats, viewmat, projmat, fx, fy, cx, cy,
                img_height, img_width, tile_bounds, clip_thresh=0.01):
        xys, depths, radii = _project(means3d, scales, glob_scale, viewmat, fx, fy, cx, cy, clip_thresh)
        ctx.glob_scale, ctx.fx, ctx.fy, ctx.cx, ctx.cy, ctx.clip_thresh = glob_scale, fx, fy, cx, cy, clip_thresh
        ctx.save_for_backward(means3d, scales, viewmat)
        return xys, depths, radii

    @staticmethod
    def backward(ctx, v_xys, v_depths, v_radii):
        means3d, scales, viewmat = ctx.saved_tensors
        with torch.enable_grad():
            m = means3d.detach().requires_grad_(True)
            s = scales.detach().requires_grad_(True)
            outs = _project(m, s, ctx.glob_scale, viewmat, ctx.fx, ctx.fy, ctx.cx, ctx.cy, ctx.clip_thresh)
            v_means3d, v_scales = torch.autograd.grad(outs, (m, s), (v_xys, v_depths, v_radii), allow_unused=True)
        return (
            v_means3d, v_scales, None, None, None, None, None, None, None, None, None, None, None,
        )


def project_gaussians(means3d, scales, glob_scale, quats, viewmat, projmat, fx, fy, cx, cy,
                      img_height, img_width, tile_bounds, clip_thresh=0.01):
    return _ProjectGaussians.apply(means3d, scales, glob_scale, quats, viewmat, projmat, fx, fy, cx, cy,
                                   img_height, img_width, tile_bounds, clip_thresh)


class SimpleTrainer:
    def __init__(self, num_points=64, H=16, W=16):
        self.H, self.W = H, W
        self.means = nn.Parameter(torch.randn(num_points, 3) * 0.5)
        self.scales = nn.Parameter(torch.rand(num_points, 3) * 0.1)
        self.quats = nn.Parameter(torch.randn(num_points, 4))
        self.rgbs = nn.Parameter(torch.rand(num_points, 3))
        self.viewmat = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 4.0], [0.0, 0.0, 0.0, 1.0]])
        self.focal = 0.5 * W
        self.tile_bounds = ((W + 15) // 16, (H + 15) // 16, 1)

    def render(self, clip_threshold):
        xys, depths, radii = project_gaussians(
            self.means, self.scales, 1.0, self.quats / self.quats.norm(dim=-1, keepdim=True),
            self.viewmat, self.viewmat, self.focal, self.focal, self.W / 2, self.H / 2,
            self.H, self.W, self.tile_bounds, clip_threshold,
        )
        ys, xs = torch.meshgrid(torch.arange(self.H, dtype=torch.float32), torch.arange(self.W, dtype=torch.float32), indexing="ij")
        pix = torch.stack([xs, ys], dim=-1).reshape(-1, 1, 2)
        d2 = ((pix - xys[None]) ** 2).sum(-1)
        alpha = torch.exp(-d2 / (2.0 * (radii[None] + 1e-3) ** 2))
        img = (alpha[..., None] * torch.sigmoid(self.rgbs)[None]).sum(1) / (alpha.sum(1, keepdim=True) + 1.0)
        return img.reshape(self.H, self.W, 3)

    def train(self, gt_image, iterations=4, lr=0.01, clip_threshold=0.5):
        optimizer = torch.optim.Adam([self.rgbs, self.means, self.scales, self.quats], lr)
        losses = []
        for it in range(iterations):
            out_img = self.render(clip_threshold)
            loss = torch.nn.functional.mse_loss(out_img, gt_image)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return torch.stack(losses)


gt_image = torch.rand(16, 16, 3)
trainer = SimpleTrainer()
losses = trainer.train(gt_image)
result = {"losses": losses, "means": trainer.means.detach().clone(), "scales": trainer.scales.detach().clone(),
          "rgbs": trainer.rgbs.detach().clone()}
