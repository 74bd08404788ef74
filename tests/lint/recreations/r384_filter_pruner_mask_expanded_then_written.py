"""A filter pruner builds a weight mask that starts as all ones,
`ones[:, None, None, None].expand_as(weight).type_as(weight)`, and then zeroes
the pruned filters row by row, `mask[index] = torch.zeros(...)`.  `type_as`
returns the expanded tensor itself when the dtype already matches, so every
filter of the mask is the same memory, and the write fails ("more than one
element of the written-to tensor refers to a single memory location").
(With a boolean `ones` the `type_as` copies, which is why a similar snippet
ran.)  The fix clones the expanded mask, or builds it with `torch.ones_like`.
Buggy line: `mask[index] = torch.zeros(...)` in `FilterPruner.prune_filters`.
Source: https://github.com/pytorch/pytorch/issues/42726"""
import torch
import torch.nn as nn


class FilterPruner:
    def __init__(self, model, sparsity=0.5):
        self.model = model
        self.sparsity = sparsity

    def default_mask(self, weight):
        ones = torch.ones(weight.size(0))
        return ones[:, None, None, None].expand_as(weight).type_as(weight)

    def prune_filters(self, weight):
        mask = self.default_mask(weight)
        norms = weight.detach().abs().flatten(1).sum(1)
        num_pruned = int(weight.size(0) * self.sparsity)
        for index in norms.argsort()[:num_pruned].tolist():
            mask[index] = torch.zeros(weight.shape[1:])  # missed: none
        return mask

    def compress(self):
        masks = {}
        for name, module in self.model.named_modules():
            if isinstance(module, nn.Conv2d):
                masks[name] = self.prune_filters(module.weight)
                with torch.no_grad():
                    module.weight.mul_(masks[name])
        return masks


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 3))
    FilterPruner(model).compress()
