"""A straight-through Gumbel-softmax for straight_through_gumbel_function_saves_hard_flag."""
import torch


class StraightThroughGumbel(torch.autograd.Function):
    """Samples a relaxed one-hot code; with `hard`, returns the one-hot argmax and passes the soft
    sample's gradient straight through."""

    @staticmethod
    def forward(ctx, logits, noise, temperature, hard):
        soft = torch.softmax((logits + noise) / temperature, dim=-1)
        ctx.save_for_backward(soft, hard)  # PRIMARY
        ctx.temperature = temperature
        if hard:
            return torch.zeros_like(soft).scatter_(-1, soft.argmax(-1, keepdim=True), 1.0)
        return soft

    @staticmethod
    def backward(ctx, grad_output):
        soft, hard = ctx.saved_tensors
        grad_logits = soft * (grad_output - (soft * grad_output).sum(-1, keepdim=True)) / ctx.temperature
        return grad_logits, None, None, None
