# message: You are attempting to call Tensor.requires_grad_() (or perhaps using
#   torch.autograd.functional.* APIs) inside of a function being transformed by a functorch
#   transform. This is unsupported, please attempt to use the functorch transforms (e.g. grad, vjp,
#   jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being transformed instead.
# code: AD141 (catalogue: func_autograd_grad_inside)
# set: 6
# trigger: per-image saliency maps batched with torch.func.vmap; the per-image function turns on
#   requires_grad_() for its image and takes torch.autograd.grad of the class score
# source: none found; the pattern as users write it
# results: maps
import torch
from torch import nn
from torch.func import vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
images = torch.randn(5, 4)


def saliency(image):
    image = image.requires_grad_()  # PRIMARY
    score = model(image).sum()
    return torch.autograd.grad(score, image)[0].abs()


maps = vmap(saliency)(images)
