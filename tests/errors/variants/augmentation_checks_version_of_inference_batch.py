# message: Inference tensors do not track version counter.
# code: AD146 (catalogue: inference_tensor_version)
# set: 6
# trigger: a loader function decorated with @torch.inference_mode() makes the batches; a noise
#   augmentation in the training loop checks batch._version to make sure it did not write into them
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


@torch.inference_mode()  # PRIMARY
def load_batch(step):
    generator = torch.Generator().manual_seed(step)
    return torch.randn(6, 4, generator=generator), torch.randn(6, 1, generator=generator)


class NoiseAugment:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, batch):
        version = batch._version
        noisy = batch + self.scale * torch.randn_like(batch)
        if batch._version != version:
            raise RuntimeError("the augmentation wrote into the batch")
        return noisy


torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
augment = NoiseAugment(0.1)
losses = []
for step in range(2):
    inputs, targets = load_batch(step)
    optimizer.zero_grad()
    loss = F.mse_loss(model(augment(inputs)), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
