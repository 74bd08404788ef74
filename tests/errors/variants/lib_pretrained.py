# helper module of pretrained_table_from_inference_helper.py (a held-out variant)
import torch


@torch.inference_mode()
def load_table(rows, dim):
    """Stands for reading a pretrained embedding table from disk (loaded for evaluation first)."""
    generator = torch.Generator().manual_seed(1)
    return torch.randn(rows, dim, generator=generator) * 0.1
