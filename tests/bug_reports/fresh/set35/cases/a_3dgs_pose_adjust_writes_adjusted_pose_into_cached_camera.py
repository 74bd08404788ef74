"""3D Gaussian Splatting training loop with a pose-adjust network added (question on zsh523/3rgs):
inside `training()` the user refines each camera's pose with
`c2w = viewpoint_cam.world_view_transform.inverse().unsqueeze(0)`,
`adjusted_c2w = scene.pose_adjust(c2w, torch.tensor([viewpoint_cam.colmap_id-1]))`, and writes the
result back into the cached camera object: `viewpoint_cam.world_view_transform =
adjusted_c2w.inverse()`, `viewpoint_cam.camera_center = ...`, `viewpoint_cam.full_proj_transform =
...`. The scene's camera list is reused every epoch, so the next time that camera is drawn its
transform is the previous iteration's graph output, and `loss.backward()` fails with "Trying to
backward through the graph a second time". The thread has no answer; the correct version applies
the adjustment to the camera's own pose on every iteration without writing into the cached camera
(a shallow copy is rendered), as gsplat's pose optimisation does.
Source: https://github.com/zsh523/3rgs/issues/5
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Camera:
    def __init__(self, colmap_id, world_view_transform, projection_matrix):
        self.colmap_id = colmap_id
        self.world_view_transform = world_view_transform
        self.projection_matrix = projection_matrix
        self.full_proj_transform = world_view_transform.unsqueeze(0).bmm(projection_matrix.unsqueeze(0)).squeeze(0)
        self.camera_center = world_view_transform.inverse()[3, :3]


class PoseAdjust(nn.Module):
    def __init__(self, n_cameras):
        super().__init__()
        self.embeds = nn.Embedding(n_cameras, 6)
        nn.init.normal_(self.embeds.weight, std=1e-3)

    def forward(self, c2w, ids):
        d = self.embeds(ids)
        dx, dr = d[:, :3], d[:, 3:]
        zero = torch.zeros_like(dr[:, 0])
        skew = torch.stack([torch.stack([zero, -dr[:, 2], dr[:, 1]], -1),
                            torch.stack([dr[:, 2], zero, -dr[:, 0]], -1),
                            torch.stack([-dr[:, 1], dr[:, 0], zero], -1)], 1)
        top = torch.cat([torch.eye(3).expand_as(skew) + skew, torch.zeros(len(ids), 3, 1)], 2)
        bottom = torch.cat([dx.unsqueeze(1), torch.ones(len(ids), 1, 1)], 2)
        return c2w.bmm(torch.cat([top, bottom], 1))


class Gaussians(nn.Module):
    def __init__(self, n=16):
        super().__init__()
        self.xyz = nn.Parameter(torch.randn(n, 3) * 0.5)
        self.colors = nn.Parameter(torch.rand(n, 3))


def render(cam, gaussians, size=8):
    homo = torch.cat([gaussians.xyz, torch.ones(len(gaussians.xyz), 1)], 1)
    projected = homo @ cam.full_proj_transform
    uv = projected[:, :2] / (projected[:, 3:] + 3.0)
    grid = torch.stack(torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij"), -1)
    weights = torch.exp(-((grid.view(-1, 1, 2) - uv.view(1, -1, 2)) ** 2).sum(-1) * 8.0)
    return (weights @ gaussians.colors).view(size, size, 3)


class Scene:
    def __init__(self, n_cameras=3):
        self.cameras = []
        for i in range(n_cameras):
            w2c = torch.eye(4)
            w2c[3, :3] = torch.randn(3) * 0.1
            self.cameras.append(Camera(i + 1, w2c, torch.eye(4)))
        self.pose_adjust = PoseAdjust(n_cameras)
        self.images = [torch.rand(8, 8, 3) for _ in range(n_cameras)]

    def getTrainCameras(self):
        return self.cameras


class Opt:
    pose_opt = True
    iterations = 6


def training(opt):
    scene = Scene()
    gaussians = Gaussians()
    optimizer = torch.optim.Adam(list(gaussians.parameters()) + list(scene.pose_adjust.parameters()), lr=1e-2)
    losses = []
    viewpoint_stack = None
    for iteration in range(opt.iterations):
        if not viewpoint_stack:
            viewpoint_stack = scene.getTrainCameras().copy()
        viewpoint_cam = viewpoint_stack.pop(0)
        gt_image = scene.images[viewpoint_cam.colmap_id - 1]

        if opt.pose_opt:
            c2w = viewpoint_cam.world_view_transform.inverse().unsqueeze(0)
            adjusted_c2w = scene.pose_adjust(c2w, torch.tensor([viewpoint_cam.colmap_id - 1])).squeeze(0)
            viewpoint_cam.world_view_transform = adjusted_c2w.inverse()
            viewpoint_cam.camera_center = adjusted_c2w.inverse()[3, :3]
            viewpoint_cam.full_proj_transform = (adjusted_c2w.inverse().unsqueeze(0).bmm(viewpoint_cam.projection_matrix.unsqueeze(0))).squeeze(0)

        image = render(viewpoint_cam, gaussians)
        loss = (image - gt_image).abs().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    return gaussians, scene, optimizer, losses


gaussians, scene, optimizer, losses = training(Opt())
result = {"losses": torch.stack(losses), "xyz": gaussians.xyz.detach().clone(),
          "pose": scene.pose_adjust.embeds.weight.detach().clone()}
