"""`chunk(4)[1].fill_(1)` on an LSTM bias in a `reset_params` that is not run
under `no_grad()`.  Source: https://github.com/galsang/BiDAF-pytorch/issues/30"""
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 4)
        self.reset_params()

    def reset_params(self):
        bias = getattr(self.rnn, "bias_hh_l0")
        bias.chunk(4)[1].fill_(1)  # missed: initialisation functions are assumed to run under no_grad


def run():
    Encoder()
