"""Adversarial attack on a deepfake detector (robust FGSM): the perturbed image, which requires
grad, goes through the detector's preprocessing, whose normalization walks the channels with
`for t, m, s in zip(tensor, mean, std): t.sub_(m).div_(s)`; the channels are outputs of `unbind`
and may not be modified in place.
Source: https://github.com/paarthneekhara/AdversarialDeepFakes/issues/23 ("Output 0 of
UnbindBackward is a view and is being modified inplace ... You should replace the inplace
operation by an out-of-place one", raised at `t.sub_(m).div_(s)`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
detector = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
MEAN, STD = [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]


def normalize(tensor, mean, std):
    for t, m, s in zip(tensor, mean, std):
        t.sub_(m).div_(s)
    return tensor


def predict(image):
    resized = F.interpolate(image[None], size=(8, 8), mode="bilinear", align_corners=False)[0]
    return detector(normalize(resized, MEAN, STD)[None])


image = torch.rand(3, 10, 10)
perturbed = image.clone().requires_grad_(True)
for it in range(3):
    loss = F.cross_entropy(predict(perturbed), torch.tensor([1]))
    grad, = torch.autograd.grad(loss, perturbed)
    perturbed = (perturbed - 0.01 * grad.sign()).clamp(0, 1).detach().requires_grad_(True)
result = {"perturbed": perturbed.detach(), "logits": predict(perturbed).detach()}
