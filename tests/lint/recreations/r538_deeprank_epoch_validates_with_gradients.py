"""DeepRank's `NeuralNet` trains a 3-D CNN on protein-protein interface
grids; one method, `_epoch(data_loader, train_model)`, runs the forward pass
for training, validation and test, and backpropagates only when
`train_model` is true.  The issue "add torch.no_grad() to speed up the
evaluation step": the validation and test epochs run with gradients on, and
the outputs collected for export keep their graphs until the epoch's
results are written.  Nothing raises; memory and time are wasted every
epoch.
Buggy line: `outputs = self.net(inputs)` in `_epoch`, reached with
`train_model=False` from `_train`.
Source: https://github.com/DeepRank/deeprank/issues/125"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CnnRegression(nn.Module):
    def __init__(self, channels=2):
        super().__init__()
        self.conv = nn.Conv3d(channels, 4, kernel_size=2)
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(F.adaptive_avg_pool3d(x, 1).flatten(1))


class NeuralNet:
    def __init__(self, net, train_loader, valid_loader, lr=0.005):
        self.net = net
        self.train_loader = train_loader
        self.valid_loader = valid_loader
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=lr)
        self.data = {}

    def _epoch(self, data_loader, train_model):
        running_loss = 0
        data = {"outputs": [], "targets": []}
        for inputs, targets in data_loader:
            outputs = self.net(inputs)  # missed: ADL031
            loss = self.criterion(outputs, targets)
            running_loss += loss.item()
            if train_model:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            data["outputs"].append(outputs)
            data["targets"].append(targets)
        return running_loss, data

    def _train(self, nepoch=1):
        for epoch in range(nepoch):
            self.net.train()
            _, self.data["train"] = self._epoch(self.train_loader, train_model=True)
            self.net.eval()
            _, self.data["valid"] = self._epoch(self.valid_loader, train_model=False)
        return self.data


def make_loader(n=2, batch=2):
    return [(torch.randn(batch, 2, 3, 3, 3), torch.randn(batch, 1)) for _ in range(n)]


def bug_shows():
    """The validation outputs kept for export hold graphs."""
    torch.manual_seed(0)
    model = NeuralNet(CnnRegression(), make_loader(), make_loader())
    data = model._train()
    return all(o.grad_fn is not None for o in data["valid"]["outputs"])
