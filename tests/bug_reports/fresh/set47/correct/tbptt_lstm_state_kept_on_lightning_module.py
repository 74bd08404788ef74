"""Per-frame classification of one very long multichannel time series with truncated
backpropagation through time, written as a Lightning module: the series is cut into windows and
each window is one training step. To carry the context from window to window, the LSTM's final
hidden and cell states are stored on the module (`self._last_h_n`, `self._last_c_n`) and given
back to the LSTM in the next `training_step`. The states still hold the previous window's graph,
so the second step's backward() walks into the first step's graph, already freed: "Trying to
backward through the graph a second time". The change truncated BPTT needs: store the states
detached, `(h_n.detach(), c_n.detach())`, so each backward() ends at the window's start.
(Lightning itself is not installed here: `fit` below is the part of its trainer the module uses.)
Source: https://whosebug.com/question/5885823/How-to-run-LSTM-on-very-long-sequence-using-Truncated-Backpropagation-in-Pytorch-lightning
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class FrameClassifier(nn.Module):
    def __init__(self, in_features, n_classes):
        super().__init__()
        self._in_features = in_features
        self._n_predicted_classes = n_classes
        self._criterion = nn.CrossEntropyLoss(reduction="mean")

        num_layers = 1
        hidden_size = 12
        batch_size = 1

        self._lstm1 = nn.LSTM(input_size=len(self._in_features), hidden_size=hidden_size,
                              num_layers=num_layers, batch_first=True)
        self._log_probs = nn.Linear(hidden_size, self._n_predicted_classes)
        self._last_h_n = torch.zeros((num_layers, batch_size, hidden_size), requires_grad=False)
        self._last_c_n = torch.zeros((num_layers, batch_size, hidden_size), requires_grad=False)

    def training_step(self, batch, batch_index):
        orig_batch, label_batch = batch
        n_labels_in_batch = np.prod(label_batch.shape)
        lstm_out, (h_n, c_n) = self._lstm1(orig_batch, (self._last_h_n, self._last_c_n))
        self._last_h_n, self._last_c_n = h_n.detach(), c_n.detach()
        log_probs = self._log_probs(lstm_out)
        loss = self._criterion(log_probs.view(n_labels_in_batch, -1), label_batch.view(n_labels_in_batch))
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


def fit(module, windows):
    optimizer = module.configure_optimizers()
    losses = []
    for batch_index, batch in enumerate(windows):
        loss = module.training_step(batch, batch_index)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


series = torch.randn(1, 60, 3)
labels = (series[..., 0] > 0).long()
windows = [(series[:, t:t + 10], labels[:, t:t + 10]) for t in range(0, 60, 10)]

module = FrameClassifier(in_features=["acc_x", "acc_y", "acc_z"], n_classes=2)
losses = fit(module, windows)
result = {"losses": torch.tensor(losses), "lstm_weight": module._lstm1.weight_hh_l0.detach().clone(),
          "head_weight": module._log_probs.weight.detach().clone()}
