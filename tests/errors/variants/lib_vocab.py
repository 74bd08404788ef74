import torch


@torch.inference_mode()
def load_embeddings(num_words, dim):
    """Pretrained word vectors, normalised to unit length (read-only preprocessing)."""
    generator = torch.Generator().manual_seed(3)
    table = torch.randn(num_words, dim, generator=generator)
    return table / table.norm(dim=1, keepdim=True)
