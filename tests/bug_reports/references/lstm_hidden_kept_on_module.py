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
        lstm_out, hidden = self.lstm(x, self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)
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
