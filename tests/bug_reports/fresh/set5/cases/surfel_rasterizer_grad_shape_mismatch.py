"""2D Gaussian splatting: the custom rasterizer (an autograd Function) treats each Gaussian as a
surfel with two scales and returns a gradient with two columns for `scales`, but the scene was
initialized with three scales per Gaussian (as for 3D Gaussian splatting); forward only reads the
first two, and backward's gradient does not match the input's shape.
Source: https://github.com/hbb1/2d-gaussian-splatting/issues/43 ("Function
_RasterizeGaussiansBackward returned an invalid gradient at index 5 - got [231550, 2] but expected
shape compatible with [231550, 3]"; answer: "You should input tensor with 2 scales, as its name").
expect: raises"""
import torch


class RasterizeSurfels(torch.autograd.Function):
    @staticmethod
    def forward(ctx, means, scales, colors):
        s2 = scales[:, :2]
        weights = torch.exp(-(means ** 2).sum(-1) / (s2.prod(-1) + 1e-3))
        ctx.save_for_backward(means, s2, colors, weights)
        return (weights[:, None] * colors).sum(0)

    @staticmethod
    def backward(ctx, grad_image):
        means, s2, colors, weights = ctx.saved_tensors
        area = s2.prod(-1) + 1e-3
        d_weights = (colors * grad_image).sum(-1)
        grad_means = d_weights[:, None] * weights[:, None] * (-2 * means / area[:, None])
        d_area = d_weights * weights * (means ** 2).sum(-1) / area ** 2
        grad_scales = d_area[:, None] * s2.flip(-1)
        grad_colors = weights[:, None] * grad_image
        return grad_means, grad_scales, grad_colors


torch.manual_seed(0)
n = 12
means = torch.nn.Parameter(torch.randn(n, 2))
scales = torch.nn.Parameter(torch.rand(n, 3) + 0.5)
colors = torch.nn.Parameter(torch.rand(n, 3))
optimizer = torch.optim.Adam([means, scales, colors], lr=0.01)
target = torch.tensor([0.3, 0.6, 0.9])
losses = []
for step in range(3):
    loss = ((RasterizeSurfels.apply(means, scales, colors) - target) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "means": means.detach(), "scales": scales.detach()[:, :2]}
