"""Fresh shape of cause 1 of r735 (ADL017, recurrent states kept as items of a list on the model):
a precipitation nowcaster whose encoder is a stack of GRU cells.  `__init__` keeps one state per
layer in a plain list on the module (`self.states = [None] * num_layers`), and `forward` carries
each layer's state from call to call with a plain item assignment, `self.states[i] = cell(x,
self.states[i])`, then feeds it to the next layer.  Nothing resets the list between batches, so
the second batch's graph hangs on the first batch's, and its backward runs back into the first
batch's graph, which the first backward freed.
Written in my own words as a forecasting repository writes it: an input projection, the cell
stack over the frames of a sequence, a readout head, and a trainer loop over batches.
Raises at the second batch's `loss.backward()` ("Trying to backward through the graph a second
time" or "modified by an inplace operation"); buggy line: the state assignment in `forward`.
A fresh shape of cause 1 of r735 (states kept as list items of the model), docs/lint.md "Recall
causes worked on, stop 48"; the cause's report is r735's source.
Source: https://github.com/coolsunxu/MIM_Pytorch/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Nowcaster(nn.Module):
    def __init__(self, in_features=4, hidden=6, num_layers=2, horizon=2):
        super().__init__()
        self.embed = nn.Linear(in_features, hidden)
        self.cells = nn.ModuleList([nn.GRUCell(hidden, hidden) for _ in range(num_layers)])
        self.readout = nn.Linear(hidden, in_features * horizon)
        self.states = [None] * num_layers

    def forward(self, frames):
        for t in range(frames.shape[1]):
            x = torch.relu(self.embed(frames[:, t]))
            for i, cell in enumerate(self.cells):
                self.states[i] = cell(x, self.states[i])  # expect: ADL017
                x = self.states[i]
        return self.readout(x)


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def train_epoch(self, batches):
        for frames, target in batches:
            prediction = self.model(frames)
            loss = F.mse_loss(prediction, target.flatten(1))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def run():
    torch.manual_seed(0)
    trainer = Trainer(Nowcaster())
    batches = [(torch.rand(3, 5, 4), torch.rand(3, 2, 4)) for _ in range(2)]
    trainer.train_epoch(batches)
