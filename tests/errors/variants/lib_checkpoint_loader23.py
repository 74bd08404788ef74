"""Loading pretrained tables for fine-tuning."""
import torch


@torch.inference_mode()  # PRIMARY
def load_table(num, dim, seed=1):
    generator = torch.Generator().manual_seed(seed)
    table = torch.randn(num, dim, generator=generator)
    return table / table.norm(dim=1, keepdim=True)
