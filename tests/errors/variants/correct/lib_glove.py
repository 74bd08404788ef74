# helper module of embedding_from_pretrained_of_inference_table.py (a held-out variant)
import torch


@torch.no_grad()  # PRIMARY
def load_table(vocabulary_size, dim):
    """Stands in for reading pretrained word vectors from disk (normalised rows)."""
    generator = torch.Generator().manual_seed(1)
    table = torch.randn(vocabulary_size, dim, generator=generator)
    return table / table.norm(dim=1, keepdim=True)
