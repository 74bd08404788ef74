# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 9
# trigger: a Dataset's __getitem__ is decorated with @torch.inference_mode() because it runs a
#   frozen feature extractor; the training loop reads the items one at a time (no DataLoader,
#   whose collate would have copied them) and feeds them to the trained head
# source: none found; the pattern as users write it (feature extraction inside the Dataset)
# results: losses, head
import torch
from torch import nn
from torch.utils.data import Dataset
import torch.nn.functional as F


class FeatureDataset(Dataset):
    def __init__(self, extractor, images, labels):
        self.extractor, self.images, self.labels = extractor, images, labels

    def __len__(self):
        return len(self.images)

    @torch.no_grad()  # PRIMARY
    def __getitem__(self, index):
        return self.extractor(self.images[index]), self.labels[index]


torch.manual_seed(0)
extractor = nn.Sequential(nn.Linear(6, 4), nn.Tanh())
head = nn.Linear(4, 3)
dataset = FeatureDataset(extractor, torch.randn(8, 6), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]))
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
losses = []
for index in range(len(dataset)):
    features, label = dataset[index]
    optimizer.zero_grad()
    loss = F.cross_entropy(head(features), label)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
