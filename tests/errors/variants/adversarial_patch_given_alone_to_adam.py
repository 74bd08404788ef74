# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but got
#   torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# set: 15
# trigger: an adversarial-patch class learns one patch tensor (made with requires_grad=True in
#   __init__) and builds its Adam optimizer on self.patch alone
# source: none found; the pattern as users write it (adversarial patches, universal perturbations)
# results: attack.patch, losses
import torch
from torch import nn


class PatchAttack:
    def __init__(self, model, size):
        self.model = model
        self.patch = torch.zeros(1, size, size, requires_grad=True)
        self.optimizer = torch.optim.Adam(self.patch, lr=0.05)  # PRIMARY

    def step(self, images, target):
        patched = images.clone()
        patched[:, :, :self.patch.shape[1], :self.patch.shape[2]] = self.patch.sigmoid()
        loss = -nn.functional.cross_entropy(self.model(patched), target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(36, 3))
for p in model.parameters():
    p.requires_grad_(False)
attack = PatchAttack(model, 3)
images = torch.rand(4, 1, 6, 6)
target = torch.tensor([0, 1, 2, 0])
losses = [attack.step(images, target) for _ in range(3)]
