"""loom_to_pairs (a utility/reward model learned from pairwise comparisons of Loom
continuations), `train_reward_model.py`: `train(dataloader, model, loss_fn, optimizer)` scores
each embedding of a comparison batch with the network, builds the pairwise logistic losses for
every pair of stubs, and then writes `loss = torch.tensor([loss_fn(...) for ...],
requires_grad=True)`: `torch.tensor` copies the loss values into a new leaf, so the mean's
backward stops at that leaf and the network's parameters never receive a gradient - the
optimizer steps nothing and the reward model stays at its initialisation.
Re-created in my own words with the script's structure: the one-hidden-layer `NeuralNetwork`,
the pairwise `loss_fn(r0, r1, y0, y1)`, a comparisons dataset of (text, rating, embedding)
stubs (here generated), and the epoch loop around `train`.
Nothing raises: `bug_shows()` shows the network's weights unchanged after training.
Buggy line: `loss = torch.tensor([...], requires_grad=True)`.
Source: https://github.com/kirchner-jan/loom_to_pairs/blob/8fa5276252c795737c4f6b8e553e30de3988bc25/train_reward_model.py"""
import itertools

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = "cpu"


class LoomComparisonsDataset(Dataset):
    def __init__(self, n=4, stubs=3, dim=8):
        generator = torch.Generator().manual_seed(0)
        self.items = [[("text", float(r), torch.rand(1, dim, generator=generator)) for r in range(stubs)]
                      for _ in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


class NeuralNetwork(nn.Module):
    def __init__(self, input_size, hidden_size, output_size=1):
        super(NeuralNetwork, self).__init__()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(input_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, output_size)
        )

    def forward(self, x):
        return self.linear_relu_stack(x)


def loss_fn(r0, r1, y0, y1):
    return torch.log(1 + torch.exp(r0 - r1)) if y1 > y0 else torch.log(1 + torch.exp(r1 - r0))


def train(dataloader, model, loss_fn, optimizer):
    model.train()
    for embed_stubs in dataloader:
        predicted_rewards = [model(stub[2].to(device))[0][0] for stub in embed_stubs]
        rewards = [stub[1] for stub in embed_stubs]
        reward_tuple = [a for a in zip(predicted_rewards, rewards)]
        loss = torch.tensor([loss_fn(r0, r1, y0, y1) for (r0, y0), (r1, y1) in itertools.combinations(reward_tuple, 2)], requires_grad=True)  # expect: ADL009
        loss = torch.mean(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def collate(batch):
    return [(text, rating, embedding) for text, rating, embedding in batch[0]]


def run(epochs=3):
    torch.manual_seed(0)
    model = NeuralNetwork(8, 10).to(device)
    loader = DataLoader(LoomComparisonsDataset(), batch_size=1, shuffle=True, collate_fn=collate)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    for t in range(epochs):
        train(loader, model, loss_fn, optimizer)
    return model


def bug_shows():
    torch.manual_seed(0)
    initial = NeuralNetwork(8, 10).state_dict()
    trained = run().state_dict()
    return all(torch.equal(initial[name], trained[name]) for name in initial)
