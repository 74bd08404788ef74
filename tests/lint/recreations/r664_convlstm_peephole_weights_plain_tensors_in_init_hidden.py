"""Convolutional_LSTM_PyTorch (automan000), convolution_lstm.py: `ConvLSTMCell` uses peephole
weights `Wci`, `Wcf`, `Wco` in its gates (`c * self.Wci` ...), but they are not parameters: they are
`None` in `__init__` and `init_hidden` (called by `ConvLSTM.forward` at step 0 of every forward)
sets them to fresh zero tensors, `Variable(torch.zeros(1, hidden, h, w))`. They are never in
`model.parameters()`, never updated and reset to zero on every call, so the peephole connections
of the paper are silently absent. Nothing fails (the issue asks "Why Wci, Wcf, Wco are Variables
rather than nn.Parameters"; a commenter: "if you declare an optimizer like
Adam(model.parameters()), parameters will not be updated forever").
Re-created with the cell, the stacked ConvLSTM and a short training loop (CPU).
Buggy line: `self.Wci = torch.zeros(1, hidden, shape[0], shape[1])` (and Wcf, Wco) in `init_hidden`.
Source: https://github.com/automan000/Convolutional_LSTM_PyTorch/issues/17"""
import torch
import torch.nn as nn


class ConvLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels, kernel_size):
        super().__init__()
        self.padding = int((kernel_size - 1) / 2)
        conv = lambda cin, bias: nn.Conv2d(cin, hidden_channels, kernel_size, 1, self.padding, bias=bias)
        self.Wxi, self.Whi = conv(input_channels, True), conv(hidden_channels, False)
        self.Wxf, self.Whf = conv(input_channels, True), conv(hidden_channels, False)
        self.Wxc, self.Whc = conv(input_channels, True), conv(hidden_channels, False)
        self.Wxo, self.Who = conv(input_channels, True), conv(hidden_channels, False)
        self.Wci = None
        self.Wcf = None
        self.Wco = None

    def forward(self, x, h, c):
        ci = torch.sigmoid(self.Wxi(x) + self.Whi(h) + c * self.Wci)
        cf = torch.sigmoid(self.Wxf(x) + self.Whf(h) + c * self.Wcf)
        cc = cf * c + ci * torch.tanh(self.Wxc(x) + self.Whc(h))
        co = torch.sigmoid(self.Wxo(x) + self.Who(h) + cc * self.Wco)
        return co * torch.tanh(cc), cc

    def init_hidden(self, batch_size, hidden, shape):
        self.Wci = torch.zeros(1, hidden, shape[0], shape[1])  # missed: no rule (weights kept as plain tensors re-made in init_hidden, not parameters) (peephole weights are plain zero tensors, re-made every forward, never trained)
        self.Wcf = torch.zeros(1, hidden, shape[0], shape[1])
        self.Wco = torch.zeros(1, hidden, shape[0], shape[1])
        return (torch.zeros(batch_size, hidden, shape[0], shape[1]),
                torch.zeros(batch_size, hidden, shape[0], shape[1]))


class ConvLSTM(nn.Module):
    def __init__(self, input_channels, hidden_channels, kernel_size, step=1, effective_step=(1,)):
        super().__init__()
        self.input_channels = [input_channels] + hidden_channels
        self.hidden_channels = hidden_channels
        self.num_layers = len(hidden_channels)
        self.step, self.effective_step = step, effective_step
        for i in range(self.num_layers):
            setattr(self, "cell{}".format(i), ConvLSTMCell(self.input_channels[i], hidden_channels[i], kernel_size))

    def forward(self, input):
        internal_state, outputs = [], []
        for step in range(self.step):
            x = input
            for i in range(self.num_layers):
                name = "cell{}".format(i)
                if step == 0:
                    bsize, _, height, width = x.size()
                    internal_state.append(getattr(self, name).init_hidden(bsize, self.hidden_channels[i], (height, width)))
                h, c = internal_state[i]
                x, new_c = getattr(self, name)(x, h, c)
                internal_state[i] = (x, new_c)
            if step in self.effective_step:
                outputs.append(x)
        return outputs, (x, new_c)


def train(steps=3):
    torch.manual_seed(0)
    model = ConvLSTM(input_channels=3, hidden_channels=[4, 4], kernel_size=3, step=3, effective_step=[2])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        out = model(torch.randn(2, 3, 6, 6))[0][0]
        loss = ((out - torch.randn_like(out)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


def bug_shows():
    """The peephole weights are not parameters and are still all zero after training."""
    model = train()
    params = {id(p) for p in model.parameters()}
    return id(model.cell0.Wci) not in params and bool((model.cell0.Wci == 0).all())


if __name__ == "__main__":
    assert bug_shows()
    print("bug shows: the peephole weights are zero, untrained tensors outside model.parameters()")
