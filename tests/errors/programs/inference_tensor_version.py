import torch


class VersionedCache:
    """Keeps a result until its input is written in place (the input's version changes)."""

    def __init__(self):
        self.key, self.value = None, None

    def cumulative(self, labels):
        key = (id(labels), labels._version)
        if key != self.key:
            self.key, self.value = key, labels.cumsum(0)
        return self.value


cache = VersionedCache()
with torch.inference_mode():  # PRIMARY
    labels = torch.arange(6)
totals = cache.cumulative(labels)
