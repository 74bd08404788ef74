"""Fresh shape of cause 2 of r701 (a graph built in `__init__` from the module's own layer,
stored on `self` and read by every `forward`), written as zero-shot classification
repositories write their heads: `ZeroShotHead.__init__` encodes the class descriptions once
with its own trainable text projection (`self.class_embeddings = self.text_proj(...)`, no
`detach()`, no `no_grad()`), `forward` scores image features against them, and a `fit()`
function trains the head over batches.  The first backward frees the projection's part of
the graph, so the second raises "Trying to backward through the graph a second time".
Buggy line: `self.class_embeddings = self.text_proj(class_descriptions)` in `__init__`.
Source: https://github.com/TianWuYuJiangHenShou/LabelSemantics/issues/5 (cause of r701, this
shape written for stop 47)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ZeroShotHead(nn.Module):
    def __init__(self, class_descriptions, image_dim=10, text_dim=6, joint_dim=8):
        super().__init__()
        self.image_proj = nn.Linear(image_dim, joint_dim)
        self.text_proj = nn.Linear(text_dim, joint_dim)
        self.class_embeddings = self.text_proj(class_descriptions)  # expect: ADL017
        self.temperature = 0.1

    def forward(self, image_features):
        image_embeddings = F.normalize(self.image_proj(image_features), dim=-1)
        class_embeddings = F.normalize(self.class_embeddings, dim=-1)
        return image_embeddings @ class_embeddings.t() / self.temperature


def fit(model, loader, optimizer, epochs=1):
    for _ in range(epochs):
        for features, labels in loader:
            logits = model(features)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def run():
    torch.manual_seed(0)
    descriptions = torch.randn(4, 6)
    model = ZeroShotHead(descriptions)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(5, 10), torch.randint(0, 4, (5,))) for _ in range(3)]
    return fit(model, loader, optimizer)
