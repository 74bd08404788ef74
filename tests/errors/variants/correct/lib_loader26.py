"""Batches for inference_loaded_batch_standardised_in_place_under_allow_mutation_on_saved_tensors."""
import torch


@torch.no_grad()  # PRIMARY
def load_batches(count, size, features=6):
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(size, features, generator=generator) * 3 + 1, torch.randn(size, 1, generator=generator))
            for _ in range(count)]
