"""Frozen-backbone features for linear probing, and a normaliser that caches its statistics."""
import torch


class FeatureBank:
    def __init__(self, backbone):
        self.backbone = backbone

    def build(self, images):
        with torch.no_grad():
            self.features = self.backbone(images).flatten(1)
        return self.features


class CachedStandardizer:
    """Recomputes mean and std only when the features change (a new tensor or an in-place write)."""

    def __init__(self):
        self.key = None

    def __call__(self, features):
        key = (id(features), features._version)
        if key != self.key:
            self.key = key
            self.mean = features.mean(0)
            self.std = features.std(0) + 1e-5
        return (features - self.mean) / self.std
