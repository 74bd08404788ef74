"""triplet_loss_kws (keyword spotting with a triplet loss, built on NeMo 0.x neural modules): the
encoder's embeddings pass through `L2Regularizer`, a `NonTrainableNM` whose `regularize` returns
`F.normalize(embeds, p=2, dim=-1)`, before `OnlineTripletLoss`. A non-trainable neural module runs
its forward under `torch.no_grad()`, so the normalized embeddings carry no graph and training fails
with "element 0 of tensors does not require grad and does not have a grad_fn" (the reporter:
"Torch autograd expects Variable with requires_grad set to True but doesn't find such
Variables"). The repository's own hint, a commented-out `l2_embeds.requires_grad = True`, only
turns the embeddings into a new leaf: the loss then runs but the encoder never learns.
Re-created with a reduced `NonTrainableNM` base (forward under `no_grad`, as NeMo's), the
regularizer, the triplet loss and the training loop.
Buggy line: `class L2Regularizer(NonTrainableNM):` (the normalization is run under no_grad).
Source: https://github.com/roman-vygon/triplet_loss_kws/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class NeuralModule(nn.Module):
    pass


class TrainableNM(NeuralModule):
    def __call__(self, *args, **kwargs):
        return super().__call__(*args, **kwargs)


class NonTrainableNM(NeuralModule):
    def __call__(self, *args, **kwargs):
        with torch.no_grad():
            return super().__call__(*args, **kwargs)


class Encoder(TrainableNM):
    def __init__(self, feat_in=20, d=16):
        super().__init__()
        self.conv = nn.Conv1d(feat_in, d, 3, padding=1)

    def forward(self, audio_signal):
        return F.relu(self.conv(audio_signal))


class L2Regularizer(NonTrainableNM):  # missed: no rule (a module whose base class runs forward under no_grad) (a non-trainable module: its output is computed under no_grad)
    def regularize(self, embeds):
        l2_embeds = F.normalize(embeds, p=2, dim=-1)
        return l2_embeds

    def forward(self, embeds):
        return self.regularize(embeds)


class OnlineTripletLoss(TrainableNM):
    def __init__(self, margin=0.2):
        super().__init__()
        self.margin = margin

    def get_triplets(self, target):
        triplets = []
        for a in range(len(target)):
            pos = [p for p in range(len(target)) if p != a and target[p] == target[a]]
            neg = [n for n in range(len(target)) if target[n] != target[a]]
            if pos and neg:
                triplets.append([a, pos[0], neg[0]])
        return torch.tensor(triplets)

    def forward(self, embeddings, target):
        embeddings = torch.flatten(embeddings, start_dim=-2)
        triplets = self.get_triplets(target)
        ap = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 1]]).pow(2).sum(1)
        an = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 2]]).pow(2).sum(1)
        return F.relu(ap - an + self.margin).mean()


def train(steps=3):
    torch.manual_seed(0)
    encoder, l2, loss_fn = Encoder(), L2Regularizer(), OnlineTripletLoss()
    optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    for _ in range(steps):
        audio = torch.randn(6, 20, 10)
        labels = torch.tensor([0, 0, 1, 1, 2, 2])
        embeds = l2(encoder(audio))
        loss = loss_fn(embeds, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


run = train  # the test harness runs `run()`


if __name__ == "__main__":
    train()
