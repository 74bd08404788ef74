"""A frozen feature extractor whose extraction runs under inference mode (for the variant
linear_probe_on_inference_mode_features)."""
import torch
from torch import nn


class FrozenExtractor:
    def __init__(self):
        torch.manual_seed(1)
        self.net = nn.Sequential(nn.Linear(6, 5), nn.Tanh())

    @torch.inference_mode()
    def extract(self, images):
        return self.net(images)
