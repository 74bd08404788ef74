"""With `truncated_bptt_steps`, PyTorch Lightning splits each batch along
time and feeds the `hiddens` that `training_step` returns for one split into
the next.  The loop handed them over as returned, without `detach()`, so
the second split's backward went back into the first split's graph, which
its own backward had freed ("Trying to backward through the graph a second
time").  The fix detaches the hiddens between splits.
Buggy line: `hiddens = step_output["hiddens"]` in `run_tbptt_batch`.
Expected finding: ADL019 at the split's `loss.backward()`.
Source: https://github.com/Lightning-AI/pytorch-lightning/pull/8145"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SequenceModel(nn.Module):
    truncated_bptt_steps = 2

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 5, batch_first=True)
        self.head = nn.Linear(5, 1)

    def training_step(self, batch, batch_idx, hiddens):
        x, y = batch
        out, hiddens = self.lstm(x, hiddens)
        loss = F.mse_loss(self.head(out), y)
        return {"loss": loss, "hiddens": hiddens}

    def tbptt_split_batch(self, batch, split_size):
        x, y = batch
        return [(x[:, t:t + split_size], y[:, t:t + split_size]) for t in range(0, x.shape[1], split_size)]


def run_tbptt_batch(model, optimizer, batch, batch_idx):
    hiddens = None
    for split_batch in model.tbptt_split_batch(batch, model.truncated_bptt_steps):
        step_output = model.training_step(split_batch, batch_idx, hiddens)
        loss = step_output["loss"]
        hiddens = step_output["hiddens"]
        optimizer.zero_grad()
        loss.backward()  # missed: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = SequenceModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = (torch.randn(2, 6, 3), torch.randn(2, 6, 1))
    run_tbptt_batch(model, optimizer, batch, 0)
