# message: Inference tensors cannot be saved for backward.
# code: AD109 (catalogue: inference_saved_decorator)
# trigger: class weights for the loss are computed by a helper decorated with
#   @torch.inference_mode() and passed as cross_entropy's weight=, which autograd saves
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn
import torch.nn.functional as F


@torch.inference_mode()  # PRIMARY
def class_weights(labels, classes):
    counts = torch.bincount(labels, minlength=classes).float()
    return counts.sum() / (classes * counts)


torch.manual_seed(0)
model = nn.Linear(4, 3)
x, y = torch.randn(6, 4), torch.tensor([0, 1, 1, 2, 2, 2])
weights = class_weights(y, 3)
loss = F.cross_entropy(model(x), y, weight=weights)
loss.backward()
