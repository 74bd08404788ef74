"""An LSTM module keeps its hidden state on self across batches, so the second backward goes
into the first batch's freed graph.
Source: https://github.com/sgadgil6/cnslab_fmri/issues/4 (and the merged fix, pull/5: stop
carrying the graph of self.hidden into the next batch)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim):
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.hidden = (torch.zeros(1, 2, hidden_dim), torch.zeros(1, 2, hidden_dim))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)  # PRIMARY
        return self.linear(lstm_out[:, -1, :])


model = fMRI_LSTM(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(2, 5, 3), torch.randn(2, 1)) for _ in range(3)]
for x, y in batches:
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in model.parameters()]
