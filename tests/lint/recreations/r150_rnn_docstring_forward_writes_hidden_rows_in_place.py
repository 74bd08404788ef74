"""The Python "efficient implementation" of `nn.RNN.forward` shown in its
docstring keeps the hidden states of all layers in one tensor and writes
each layer's new state into it in place, `h_t[layer] = torch.tanh(input_t @
W_ih.T + h_t_minus_1[layer] @ W_hh.T + ...)`, where the next layer's input
is `input_t = h_t[layer - 1]`, a view of the same tensor that the matmul
keeps for backward.  Training anything on it fails at `backward()` ("one of
the variables needed for gradient computation has been modified by an
inplace operation"); the fix builds a list per time step and stacks it.
Source: https://github.com/pytorch/pytorch/issues/165621"""
import torch
import torch.nn as nn


class PyRNN(nn.Module):
    def __init__(self, input_size=4, hidden_size=6, num_layers=2):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size, num_layers)
        self.num_layers = num_layers
        self.hidden_size = hidden_size

    def forward(self, x, hx=None, batch_first=False):
        params = dict(self.rnn.named_parameters())
        if batch_first:
            x = x.transpose(0, 1)
        seq_len, batch_size, _ = x.size()
        if hx is None:
            hx = torch.zeros(self.num_layers, batch_size, self.hidden_size)
        h_t_minus_1 = hx.clone()
        h_t = hx.clone()
        output = []
        for t in range(seq_len):
            for layer in range(self.num_layers):
                input_t = x[t] if layer == 0 else h_t[layer - 1]
                h_t[layer] = torch.tanh(  # missed: ADL001
                    input_t @ params[f"weight_ih_l{layer}"].T
                    + h_t_minus_1[layer] @ params[f"weight_hh_l{layer}"].T
                    + params[f"bias_hh_l{layer}"]
                    + params[f"bias_ih_l{layer}"]
                )
            output.append(h_t[-1].clone())
            h_t_minus_1 = h_t.clone()
        output = torch.stack(output)
        if batch_first:
            output = output.transpose(0, 1)
        return output, h_t


def run():
    torch.manual_seed(0)
    model = PyRNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(5, 3, 4)
    h0 = torch.randn(2, 3, 6)
    output, hn = model(inputs, h0)
    target = torch.ones_like(output)
    loss = nn.MSELoss()(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
