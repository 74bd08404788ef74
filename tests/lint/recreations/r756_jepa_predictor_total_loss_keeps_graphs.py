"""JEPA-Trajectory-Finder, `src/models/predictor_train_sep.py`: the action-conditioned predictor
(an `LSTMCell` whose hidden and cell states are set from the frozen encoder's embedding of the
first frame with `set_hc` and cleared with `reset_hc`) is trained alone; per batch the loss sums
the MSE between the predicted and the encoded next states over the trajectory, is
backpropagated and stepped, and then `total_loss += loss` adds the loss tensor itself to the
epoch total, which is only printed as `avg_loss` at the end of the epoch.  Every batch's graph
(the whole unrolled LSTM) stays reachable from `total_loss` until the epoch ends.
Re-created in my own words with the repository's structure: the CNN encoder with its expander
head, the `Predictor` with `set_hc`/`reset_hc`, `train_predictor(pred, enc, dataloader,
criterion, optimizer, device, use_expander, epochs)` freezing the encoder, and a trajectory
dataset of states and actions.
Nothing raises: `bug_shows()` shows the epoch's average loss still attached to a graph.
Buggy line: `total_loss += loss`.
Source: https://github.com/gokulkrishna98/JEPA-Trajectory-Finder/blob/8baf9dc7a583c669aa284a62433f54d7f60b2764/src/models/predictor_train_sep.py"""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class TrajectoryDataset(Dataset):
    def __init__(self, n=4, length=3):
        generator = torch.Generator().manual_seed(0)
        self.states = torch.rand(n, length + 1, 2, 8, 8, generator=generator)
        self.actions = torch.rand(n, length, 2, generator=generator)

    def __len__(self):
        return len(self.states)

    def __getitem__(self, idx):
        return self.states[idx], self.actions[idx]


class SimpleCNN(nn.Module):
    def __init__(self, embed_size, input_channel=2):
        super().__init__()
        self.conv = nn.Conv2d(input_channel, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, embed_size)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


class Encoder(nn.Module):
    def __init__(self, backbone, embed_size=16):
        super().__init__()
        self.backbone = backbone
        self.expander = nn.Sequential(nn.Linear(embed_size, embed_size), nn.ReLU(), nn.Linear(embed_size, embed_size))

    def forward(self, x):
        x = self.backbone(x)
        return x, self.expander(x)


class Predictor(nn.Module):
    def __init__(self, input_size, hidden_size) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.lstm_cell = nn.LSTMCell(input_size, hidden_size)
        self.h = None
        self.c = None

    def set_hc(self, h, c):
        self.h = h
        self.c = c

    def reset_hc(self):
        self.h = self.h.zero_()
        self.c = self.c.zero_()

    def forward(self, action):
        self.h, self.c = self.lstm_cell(action, (self.h, self.c))
        return self.h


def train_predictor(pred, enc, dataloader, criterion, optimizer, device,
                    use_expander=False, epochs=2, epoch_log=None):
    pred, enc = pred.to(device), enc.to(device)

    # freezing the encoder and setting it to evaluation mode
    enc.eval()
    for param in enc.parameters():
        param.requires_grad = False

    for epoch in range(epochs):
        total_loss = 0.0
        for batch in dataloader:
            s, a = batch
            s, a = s.to(device), a.to(device)

            o = s[:, 0, :, :, :]
            with torch.no_grad():
                x, z = enc(o)
                so = z if use_expander else x

            co = torch.zeros(so.shape).to(device)
            pred.set_hc(so, co)

            loss, L = 0, a.shape[1]
            for i in range(L):
                sy_hat = pred(a[:, i, :])
                si = s[:, i + 1, :, :, :]
                with torch.no_grad():
                    x, z = enc(si)
                    sy = z if use_expander else x
                loss += criterion(sy_hat, sy)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            pred.reset_hc()

            total_loss += loss  # expect: ADL023

        avg_loss = total_loss / len(dataloader)
        if epoch_log is not None:
            epoch_log.append(avg_loss)
    return pred


def run(epoch_log=None):
    torch.manual_seed(0)
    device = torch.device("cpu")
    dataloader = DataLoader(TrajectoryDataset(), batch_size=2, shuffle=True)
    encoder = Encoder(SimpleCNN(16, 2))
    predictor = Predictor(input_size=2, hidden_size=16)
    optimizer = torch.optim.SGD(predictor.parameters(), lr=0.001, momentum=0.9, weight_decay=1.5e-4)
    return train_predictor(predictor, encoder, dataloader, nn.MSELoss(), optimizer, device,
                           use_expander=True, epoch_log=epoch_log)


def bug_shows():
    epoch_log = []
    run(epoch_log)
    return epoch_log[-1].grad_fn is not None
