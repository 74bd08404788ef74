"""Attribution for the monitoring callback."""
import torch


def integrated_gradients(model, x, baseline, target, steps=8):
    """Riemann sum of the gradients along the straight path from baseline to x."""
    alphas = torch.linspace(0, 1, steps).view(-1, 1, 1)
    path = baseline + alphas * (x - baseline)  # PRIMARY
    scores = model(path.flatten(0, 1))[:, target].sum()
    gradients, = torch.autograd.grad(scores, [path])
    return (x - baseline) * gradients.mean(0)
