# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# set: 28
# trigger: a Lightning-like recommender's configure_optimizers() returns two optimizers: SparseAdam
#   for the sparse item embedding, given its weight tensor alone, and Adam for the dense layers; a
#   Trainer-like class calls configure_optimizers() and steps both
# source: none found; the pattern as users write it (SparseAdam for sparse embeddings, Adam for the rest)
# results: losses, model.items.weight, model.head
import torch
from torch import nn
import torch.nn.functional as F


class ItemRanker(nn.Module):
    def __init__(self, items=30, width=4):
        super().__init__()
        self.items = nn.Embedding(items, width, sparse=True)
        self.head = nn.Linear(width, 1)

    def forward(self, history):
        return self.head(self.items(history).mean(1)).squeeze(1)

    def training_step(self, batch):
        history, clicked = batch
        return F.binary_cross_entropy_with_logits(self(history), clicked)

    def configure_optimizers(self):
        sparse = torch.optim.SparseAdam([self.items.weight], lr=0.05)  # PRIMARY
        dense = torch.optim.Adam(self.head.parameters(), lr=0.05)
        return [sparse, dense]


class Trainer:
    def __init__(self, steps):
        self.steps = steps

    def fit(self, module):
        optimizers = module.configure_optimizers()
        losses = []
        for _ in range(self.steps):
            batch = (torch.randint(0, 30, (8, 3)), torch.rand(8))
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss = module.training_step(batch)
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
            losses.append(loss.item())
        return losses


torch.manual_seed(0)
model = ItemRanker()
losses = Trainer(steps=3).fit(model)
