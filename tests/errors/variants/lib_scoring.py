# helper module of no_grad_helper_bound_with_partial.py (a held-out variant)
import torch


@torch.no_grad()  # PRIMARY
def pooled_logits(model, tokens, pool="mean"):
    """The model's logits for a batch of token sequences, pooled over the sequence."""
    logits = model(tokens)
    return logits.mean(dim=1) if pool == "mean" else logits.max(dim=1).values
