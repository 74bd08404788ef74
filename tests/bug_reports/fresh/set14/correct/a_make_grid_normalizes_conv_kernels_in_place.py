"""Visualising the convolution kernels of a CNN (AlexNet) with `torchvision.utils.make_grid(...,
normalize=True, scale_each=True)`: the user slices each output channel's kernels straight from
`sub_module.weight`, a parameter that requires grad. make_grid clones the batch and then normalizes
each image in place while iterating over it (`for t in tensor: t.clamp_(...); t.sub_(...).div_(...)`);
iterating unbinds the clone into views of a tensor with a graph, and the in-place clamp on such a
view raises "Output 0 of UnbindBackward is a view and is being modified inplace. This view is the
output of a function that returns multiple views." torchvision is not a dependency here, so the
part of make_grid that matters (clone, then per-image in-place normalization, then tiling) is
re-created as a helper.
Source: https://github.com/pytorch/vision/issues/3025 (the same report as
https://github.com/pytorch/pytorch/issues/48149); the kernels are plotted, not trained, so they are
taken without their graph (`.detach()`) before they are normalized.
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2, normalize=False, scale_each=False):
    """A batch of images (B, C, H, W) tiled into one image, as torchvision.utils.make_grid."""
    if normalize:
        tensor = tensor.clone()  # make_grid does not modify its argument

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        if scale_each:
            for t in tensor:  # each image of the batch on its own range
                norm_ip(t, float(t.min()), float(t.max()))
        else:
            norm_ip(tensor, float(tensor.min()), float(tensor.max()))
    count, channels, height, width = tensor.shape
    ncols = min(nrow, count)
    nrows = (count + ncols - 1) // ncols
    grid = tensor.new_zeros(channels, nrows * (height + padding) + padding, ncols * (width + padding) + padding)
    for index in range(count):
        row, col = divmod(index, ncols)
        top, left = row * (height + padding) + padding, col * (width + padding) + padding
        grid[:, top:top + height, left:left + width] = tensor[index]
    return grid


class SmallAlexNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 5, stride=2), nn.ReLU(), nn.Conv2d(4, 6, 3), nn.ReLU())
        self.classifier = nn.Linear(6, 10)


alexnet = SmallAlexNet()

grids = []
for sub_module in alexnet.modules():
    if isinstance(sub_module, nn.Conv2d):
        kernels = sub_module.weight
        c_out, c_in, k_w, k_h = tuple(kernels.shape)
        for o_idx in range(c_out):
            kernel_idx = kernels[o_idx, :, :, :].detach().unsqueeze(1)
            img_grid = make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3)
            grids.append(img_grid)

result = {"grids": grids}
