"""A PyTorch issue, "LSTM architecture has met a explosive growth in the
training process": a video classifier stores its LSTM state on the module
(`self.hidden = self.init_hidden()` in `__init__`, then
`lstm_out, self.hidden = self.lstm(x, self.hidden)` in `forward`) and trains
with a loop that calls `backward()` on every batch.  The state returned by
one batch is the input of the next, so every graph hangs on to the previous
ones; with today's PyTorch the second `backward()` fails with "Trying to
backward through the graph a second time".  Re-created with the issue's
module shape (`init_hidden`, `hidden2class`, optional log-softmax) and a
`train(train_data, model, criterion, optimizer, epoch)` function.
Buggy line: `lstm_out, self.hidden = self.lstm(x, self.hidden)` (the state
kept across batches with its graph).
Source: https://github.com/pytorch/pytorch/issues/2769"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTM(nn.Module):
    def __init__(self, input_len=16, hidden_len=16, target_size=5, is_softmax=True):
        super().__init__()
        self.hidden_len = hidden_len
        self.is_softmax = is_softmax
        self.lstm = nn.LSTM(input_len, hidden_len, batch_first=True)
        self.target_size = target_size
        self.hidden2class = nn.Linear(hidden_len, target_size)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (torch.zeros(1, 1, self.hidden_len), torch.zeros(1, 1, self.hidden_len))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)  # expect: ADL017
        cls_scores = self.hidden2class(lstm_out[:, -1, :]).view(-1, self.target_size)
        if self.is_softmax:
            cls_scores = F.log_softmax(cls_scores, dim=1)
        return cls_scores


def train(train_data, model, criterion, optimizer, epoch):
    model.train()
    for i, (inp, target) in enumerate(train_data):
        output = model(inp)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = LSTM()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = [(torch.randn(1, 4, 16), torch.tensor([i % 5])) for i in range(3)]
    train(data, model, nn.NLLLoss(), optimizer, 0)
