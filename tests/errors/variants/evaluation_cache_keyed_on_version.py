# message: Inference tensors do not track version counter.
# code: AD146 (catalogue: inference_tensor_version)
# set: 7
# trigger: a Lightning-like validation loop runs under torch.inference_mode(); a module caches its
#   normalised input keyed on (id, x._version) to skip recomputing it for the same batch; the
#   validation loop scales the uint8 images to floats inside that block
# source: https://github.com/k2-fsa/k2/issues/1210 (a _version read in code run under inference_mode)
# results: scores, model
import torch
from torch import nn


class CachedNormaliser(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.cache = {}

    def forward(self, x):
        key = (id(x), x._version)  # PRIMARY
        if key not in self.cache:
            self.cache = {key: (x - x.mean(0)) / (x.std(0) + 1e-5)}
        return self.lin(self.cache[key])


def validate(model, batches):
    scores = []
    with torch.inference_mode():
        for batch in batches:
            scores.append(model(batch.float() / 255).sum().item())
    return scores


torch.manual_seed(0)
model = CachedNormaliser()
batches = [torch.randint(0, 256, (4, 3), dtype=torch.uint8) for _ in range(2)]
scores = validate(model, batches)
