"""A forecasting model trained with SMAPE, written element-wise as in the report:
`|y_hat - y| / (|y_hat| + |y|)`, then the NaN terms (where forecast and target are both 0, here
intermittent demand with a ReLU output) are dropped with `elementwise_smape[~nan_mask].mean()`.
The loss is finite, but backward() still goes through the dropped 0/0 terms: the division's
gradient there is 0/0. Under anomaly detection (as the reporter ran it) backward() fails with
"Function 'DivBackward0' returned nan values in its 0th output"; without it the weights' gradients
are NaN. The fix is to leave those terms out before dividing (mask the denominator's zeros first).
Source: https://github.com/pytorch/pytorch/issues/22820
(https://stackoverflow.com/questions/57013705)
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class DemandForecaster(nn.Module):
    def __init__(self, n_features=3, hidden=16, horizon=4):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, history):
        out, _ = self.lstm(history)
        return torch.relu(self.head(out[:, -1]))  # demand is never negative


def smape_loss(model_outputs, target_outputs):
    numerator = torch.abs(model_outputs - target_outputs)
    denominator = torch.abs(model_outputs) + torch.abs(target_outputs)
    elementwise_smape = torch.div(numerator, denominator)
    nan_mask = torch.isnan(elementwise_smape)
    loss = elementwise_smape[~nan_mask].mean()
    assert ~torch.isnan(loss)
    return loss


history = torch.randn(32, 12, 3)
demand = torch.relu(torch.randn(32, 4) + 0.3)  # intermittent: about a third of the targets are 0

model = DemandForecaster()
with torch.no_grad():
    model.head.bias.fill_(-0.05)  # some forecasts start at exactly 0 after the ReLU
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

losses = []
with torch.autograd.set_detect_anomaly(True):
    for epoch in range(5):
        optimizer.zero_grad()
        model_outputs = model(history)
        loss = smape_loss(model_outputs, demand)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "head": model.head.weight.detach().clone()}
