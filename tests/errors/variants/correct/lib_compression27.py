"""Top-k gradient sparsification for topk_gradient_compression_assigns_values_without_scatter."""
import torch


class TopKCompression:
    """Keeps the `ratio` largest entries of every gradient, as a worker would before sending them, and
    carries what it dropped to the next step (error feedback)."""

    def __init__(self, model, ratio=0.25):
        self.ratio = ratio
        self.residuals = {name: torch.zeros_like(p) for name, p in model.named_parameters()}

    def on_after_backward(self, model):
        for name, p in model.named_parameters():
            flat = (p.grad + self.residuals[name]).flatten()
            k = max(1, int(flat.numel() * self.ratio))
            _, indices = flat.abs().topk(k)
            values = flat[indices]
            kept = torch.zeros_like(flat).scatter(0, indices, values)
            self.residuals[name] = (flat - kept).view_as(p)
            p.grad = kept.view_as(p)  # PRIMARY
