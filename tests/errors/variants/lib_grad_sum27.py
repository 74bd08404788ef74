"""A gradient-accumulation callback for grad_accumulation_callback_adds_sparse_embedding_grad_first."""
import torch


class GradientSum:
    """Sums each parameter's gradient over the micro-batches of a step, then hands the mean to the
    optimizer (the model's own .grad is cleared after every micro-batch)."""

    def __init__(self, model):
        self.sums = {name: torch.zeros_like(p) for name, p in model.named_parameters()}
        self.count = 0

    def on_after_backward(self, model):
        for name, p in model.named_parameters():
            self.sums[name] = p.grad + self.sums[name]  # PRIMARY
            p.grad = None
        self.count += 1

    def on_before_step(self, model):
        for name, p in model.named_parameters():
            p.grad = self.sums[name] / self.count
            self.sums[name] = torch.zeros_like(p)
        self.count = 0
