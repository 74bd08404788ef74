# helper module of feature_bank_unsqueezes_then_detaches_in_place.py (a held-out variant)
import torch


class FeatureBank:
    def __init__(self):
        self.entries = []

    def add(self, z):
        self.entries.append(z.unsqueeze(0).detach())  # PRIMARY

    def stacked(self):
        return torch.cat(self.entries)
