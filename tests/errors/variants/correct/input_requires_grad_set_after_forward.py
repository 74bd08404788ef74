# message: The differentiated Tensor at index 0 appears to not have been used in the graph. Set
#   allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# set: 10
# trigger: a saliency helper runs the model on the images first and only then turns on
#   images.requires_grad_() before asking torch.autograd.grad for their gradient; the score was
#   computed before the images required grad, so it does not depend on them
# source: none found; the pattern as users write it (saliency maps, vanilla gradients)
# results: saliency, model
import torch
from torch import nn


def saliency_map(model, images, labels):
    images.requires_grad_()  # PRIMARY
    scores = model(images).gather(1, labels[:, None]).sum()
    (gradient,) = torch.autograd.grad(scores, images)
    return gradient.abs().amax(dim=1)


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 5 * 5, 3))
saliency = []
for _ in range(2):
    images, labels = torch.randn(2, 3, 5, 5), torch.tensor([0, 2])
    saliency.append(saliency_map(model, images, labels))
