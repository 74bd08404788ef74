"""Fitting a batch of 3-D point sets, shape (B, 3, N), together with one learnable height offset
per batch element: the offset is added to the z channel only, in place on a view of the point
tensor, `points[:, 2, :] += z_offset`. The points are a leaf that requires grad, so the first
forward pass fails with "a view of a leaf Variable that requires grad is being used in an in-place
operation". The page's change: build the shifted tensor out of place, the untouched x and y
channels concatenated with the shifted z channel.
Source: https://pytroubles.com/en/ampposts/id3016-pytorch-z-channel-shift-without-breaking-autograd-avoid-in-place-views-keep-gradients-safe
expect: raises"""
import torch

torch.manual_seed(0)

batch, num_points = 2, 5
points = torch.rand(batch, 3, num_points, requires_grad=True)
z_offset = torch.tensor([[1.0], [10.0]], requires_grad=True)
target = torch.rand(batch, 3, num_points) + torch.tensor([0.0, 0.0, 4.0]).view(1, 3, 1)


def shift_z(pts, offset):
    pts[:, 2, :] += offset
    return pts


optimizer = torch.optim.Adam([points, z_offset], lr=0.05)
losses = []
for step in range(25):
    optimizer.zero_grad()
    shifted = shift_z(points, z_offset)
    loss = ((shifted - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"points": points.detach().clone(), "z_offset": z_offset.detach().clone(),
          "losses": torch.tensor(losses)}
