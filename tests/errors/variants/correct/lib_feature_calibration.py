"""Per-feature scales from warm-up batches (helper of
feature_scale_calibrated_under_inference_mode_in_lib)."""
import torch


@torch.no_grad()  # PRIMARY
def calibrate_scale(encoder, batches):
    features = torch.cat([encoder(batch) for batch in batches])
    return 1.0 / (features.std(dim=0) + 1e-5)
