"""An article on CUDA out-of-memory during inference: a user runs a trained
network on 300x300 images with a batch size of 1 and gets "CUDA error: out
of memory" after 25 images; `torch.cuda.empty_cache()` does not help.  The
cause given is that PyTorch keeps the computation graph of each inference
for a gradient that is never asked for, and the fix is `torch.no_grad()`.
Re-created as the user's inference script: a `Detector` wrapping the model,
a `predict` method, and a loop over images collecting the raw predictions
for later post-processing.  Nothing raises; every kept prediction holds its
own graph.
Buggy line: `scores = self.model(x)` in `predict` (gradients on).
Source: http://www.kouhan.cn/en/article/00034093"""
import torch
import torch.nn as nn


class TinyNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        return self.cls(self.body(x))


class Detector:
    def __init__(self, model):
        self.model = model
        self.model.eval()

    def preprocess(self, image):
        return (image / 255.0).unsqueeze(0)

    def predict(self, image):
        x = self.preprocess(image)
        scores = self.model(x)  # missed: ADL031
        return scores


def run_folder(detector, images):
    predictions = []
    for image in images:
        predictions.append(detector.predict(image))
    return predictions


def bug_shows():
    """Each kept prediction still references a graph back to the weights."""
    torch.manual_seed(0)
    images = [torch.randint(0, 256, (3, 30, 30)).float() for _ in range(3)]
    preds = run_folder(Detector(TinyNet()), images)
    return all(p.grad_fn is not None for p in preds)
