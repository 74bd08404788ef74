# helper module of zero_shot_class_embeddings_from_inference_helper.py (a held-out variant)
import torch
import torch.nn.functional as F


def class_embeddings(text_encoder, class_tokens):
    """One normalised embedding per class name (the zero-shot classifier's weights)."""
    with torch.no_grad():  # PRIMARY
        embedded = F.normalize(text_encoder(class_tokens).mean(1), dim=-1)
    return embedded
