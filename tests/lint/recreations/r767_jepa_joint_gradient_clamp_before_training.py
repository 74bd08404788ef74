"""JEPA-Trajectory-Finder, `src/models/joint_model_train.py`: `train_joint` means to clip the
predictor LSTM's gradients ("clipping the gradient to handle gradient explosions in LSTM") but
does it once, before the epoch loop: `for param in model.predictor.parameters(): if param.grad
is not None: param.grad.data = torch.clamp(param.grad.data, -max_val, max_val)`.  At that point
no backward has run and every `.grad` is `None`; inside the loop `loss.backward()` is followed
directly by `optimizer.step()`, so no update is ever clipped.
Re-created in my own words with the script's structure: `SimpleEncoder` with its residual
convolutions, the `VICRegModel` with a projection head, the `Predictor` LSTM cell with
`set_hc`/`reset_hc`, `JEPAModel` with `set_predictor` and `forward(action, state)`, a VICReg
style encoder loss, and `train_joint(model, dataloader, criterion_encoder, criterion_pred,
optimizer, transformation1, transformation2, device, epochs, use_expander)`.
Nothing raises: `bug_shows()` shows a predictor gradient beyond `max_val` reaching the step.
Buggy lines: the clamp before the epoch loop, and the step right after the backward.
Source: https://github.com/gokulkrishna98/JEPA-Trajectory-Finder/blob/061b44e2db2069c3ea4d98252d2f97290122fd92/src/models/joint_model_train.py"""
import torch
import torch.nn as nn
import torch.nn.functional as F

embed_dim = 16


class SimpleEncoder(nn.Module):
    def __init__(self, embed_size, input_channel=2):
        super().__init__()
        self.conv1 = nn.Conv2d(input_channel, 4, padding=1, kernel_size=3)
        self.conv2 = nn.Conv2d(4, 4, padding=1, kernel_size=3)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4 * 8 * 8, embed_size)

    def forward(self, x):
        x1 = self.relu(self.conv1(x))
        x2 = self.relu(self.conv2(x1)) + x1
        return self.fc(x2.view(x2.size(0), -1))


class VICRegModel(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.projection_head = nn.Sequential(nn.Linear(embed_dim, 32), nn.ReLU(), nn.Linear(32, embed_dim))

    def forward(self, x):
        x = self.backbone(x).flatten(start_dim=1)
        return x, self.projection_head(x)


class Predictor(nn.Module):
    def __init__(self, input_size, hidden_size) -> None:
        super().__init__()
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


class JEPAModel(nn.Module):
    def __init__(self, embed_size, input_channel_size):
        super().__init__()
        self.encoder = VICRegModel(SimpleEncoder(embed_size, input_channel_size))
        self.predictor = Predictor(input_channel_size, embed_dim)

    def set_predictor(self, o, co, use_expander=False):
        x, z = self.encoder.forward(o)
        so = z if use_expander else x
        self.predictor.set_hc(so, co)
        return so

    def forward(self, action=None, state=None):
        sy_hat, sy = None, None
        if action is not None:
            sy_hat = self.predictor(action)
        if state is not None:
            sy = self.encoder(state)
        return sy_hat, sy


def VICReg_criterion(z1, z2):
    invariance = F.mse_loss(z1, z2)
    variance = F.relu(1 - torch.sqrt(z1.var(dim=0) + 1e-4)).mean() + F.relu(1 - torch.sqrt(z2.var(dim=0) + 1e-4)).mean()
    return invariance + variance


def get_encoder_loss(model, states, transformation1, transformation2, criterion):
    _, z1 = model.encoder(transformation1(states))
    _, z2 = model.encoder(transformation2(states))
    return criterion(z1, z2)


def train_joint(model, dataloader, criterion_encoder, criterion_pred,
                optimizer, transformation1, transformation2,
                device, epochs=1, use_expander=False):
    model.to(device)
    model.train()

    # clipping the gradient to handle gradient explosions in LSTM
    max_val = 5.0
    for param in model.predictor.parameters():
        if param.grad is not None:
            param.grad.data = torch.clamp(param.grad.data, -max_val, max_val)  # missed: no rule (a clamp of .grad before any backward, outside the training loop)

    for epoch in range(epochs):
        total_loss = 0
        for batch in dataloader:
            state, action = batch
            state, action = state.to(device), action.to(device)
            B, L, D = state.shape[0], action.shape[1], model.predictor.hidden_size

            loss, loss1, loss2, loss3 = 0, 0, 0, 0
            o = state[:, 0, :, :, :]
            c0 = torch.zeros((B, D)).to(device)
            model.set_predictor(o, c0, use_expander)

            loss1 = get_encoder_loss(model, o, transformation1, transformation2, criterion_encoder)
            for i in range(L):
                sy_hat, (sy_enc, sy_exp) = model(action[:, i, :], state[:, i + 1, :, :, :])
                sy = sy_exp if use_expander else sy_enc
                loss2 += criterion_pred(sy_hat, sy)
                loss3 += get_encoder_loss(model, state[:, i, :, :, :], transformation1, transformation2,
                                          criterion_encoder)

            loss = loss1 + loss2 + loss3
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
    return model


def make_batches():
    generator = torch.Generator().manual_seed(0)
    return [(300 * torch.rand(2, 3, 2, 8, 8, generator=generator), torch.rand(2, 2, 2, generator=generator))]


def run(optimizer_factory=None):
    torch.manual_seed(0)
    model = JEPAModel(embed_dim, 2)
    optimizer = (optimizer_factory or (lambda params: torch.optim.SGD(params, lr=1e-3, momentum=0.9)))(model.parameters())
    flip = lambda x: torch.flip(x, dims=[-1])
    return train_joint(model, make_batches(), VICReg_criterion, nn.MSELoss(), optimizer, flip, lambda x: x,
                       torch.device("cpu"))


def bug_shows():
    # with a zero learning rate the last step's gradients stay on the parameters
    model = run(lambda params: torch.optim.SGD(params, lr=0.0))
    return max(p.grad.abs().max().item() for p in model.predictor.parameters()) > 5.0
