"""GAN latent-space geometry: the gradient of a feature objective with respect to perturbed latent
vectors is taken with `torch.autograd.grad(activs, perturb_vecs)`, but the objective returns one
activation per image, not a scalar.
Source: https://github.com/Animadversio/GAN-Geometry/issues/4 ("grad can be implicitly created only
for scalar outputs"; fix found in the thread and confirmed by the author: take the gradient of
`activs.mean()`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(6, 48), nn.Tanh(), nn.Unflatten(1, (3, 4, 4))).eval()
features = nn.Sequential(nn.Conv2d(3, 5, 3), nn.ReLU()).eval()
for p in [*generator.parameters(), *features.parameters()]:
    p.requires_grad_(False)


def objective(images):
    return features(images)[:, 2].mean((1, 2))


reference = torch.randn(1, 6)
basis = torch.randn(4, 6)
perturb_vecs = (reference + 0.1 * basis).requires_grad_(True)
img = generator(perturb_vecs)
resz_img = nn.functional.interpolate(img, size=(6, 6), mode="bilinear", align_corners=False)
activs = objective(resz_img)
ftgrad_both = torch.autograd.grad(activs, perturb_vecs, retain_graph=False, create_graph=False)[0]
hvp_estimate = (ftgrad_both - ftgrad_both.mean(0)) / 0.1
result = {"activs": activs.detach(), "ftgrad": ftgrad_both, "hvp": hvp_estimate}
