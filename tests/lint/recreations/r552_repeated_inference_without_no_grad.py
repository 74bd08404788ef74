"""A post on "CUDA out of memory" during inference: a user runs a trained
network over images one at a time (batch size 1) and runs out of GPU memory
after a few dozen; `torch.cuda.empty_cache()` does not help.  The cause: the
forward passes run with autograd on, so every output keeps its graph while
the results are collected; the fix is `torch.no_grad()` around inference.
Re-created as a predictor class with `model.eval()` but no `no_grad`, whose
`predict_folder` keeps every output.  Nothing raises.
Buggy line: `out = self.model(img)`.
Source: https://openillumi.com/en/en-pytorch-cuda-oom-fix-no-grad"""
import torch
import torch.nn as nn


class Predictor:
    def __init__(self, model):
        self.model = model
        self.model.eval()

    def preprocess(self, image):
        return image.unsqueeze(0)

    def predict_one(self, image):
        img = self.preprocess(image)
        out = self.model(img)  # missed: ADL031
        return out

    def predict_folder(self, images):
        results = []
        for image in images:
            results.append(self.predict_one(image))
        return results


def bug_shows():
    """The collected outputs hold graphs into the network."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    results = Predictor(model).predict_folder([torch.randn(3, 8, 8) for _ in range(3)])
    return all(r.requires_grad and r.grad_fn is not None for r in results)
