"""MIM (memory in memory) in PyTorch, `layers/MIMN.py`: the MIMN difference cell splits its
hidden-state convolution into four gates with `torch.split`, binds two of them to new names
(`g_ = g_h`, `o_ = o_h`), and when an input is given adds the input gates in place (`g_ += g_x`,
`o_ += o_x`).  `g_` is still the split's output, a view from a function that returns several views,
so the in-place add raises on the first forward (the sums `i_ = i_h + i_c` and `f_ = f_h + f_c` are
new tensors and are fine).
Re-created in my own words with the cell's structure: the tensor layer norm helper, the
`h_t`/`x` convolutions, the trainable `ct_weight`/`oc_weight` maps, `init_state`, and the cell
run over a short sequence of difference inputs as MIM runs it.
Raises at `g_ += g_x`.
Source: https://github.com/coolsunxu/MIM_Pytorch/blob/e3af23f18c491bbe06098b57995b9fe22cbf3d24/layers/MIMN.py"""
import torch
import torch.nn as nn


class tensor_layer_norm(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.beta = nn.Parameter(torch.zeros(num_features, 1, 1))
        self.gamma = nn.Parameter(torch.ones(num_features, 1, 1))

    def forward(self, x):
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        var = x.var(dim=(1, 2, 3), keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + 1e-5) + self.beta


class MIMN(nn.Module):
    def __init__(self, layer_name, filter_size, num_hidden, seq_shape, tln=True):
        super(MIMN, self).__init__()
        self.layer_name = layer_name
        self.filter_size = filter_size
        self.num_hidden = num_hidden
        self.layer_norm = tln
        self.batch = seq_shape[0]
        self.height = seq_shape[3]
        self.width = seq_shape[4]
        self._forget_bias = 1.0

        self.h_t = nn.Conv2d(self.num_hidden, self.num_hidden * 4, self.filter_size, 1, padding=filter_size // 2)
        self.ct_weight = nn.Parameter(torch.randn((self.num_hidden * 2, self.height, self.width)))
        self.x = nn.Conv2d(self.num_hidden, self.num_hidden * 4, self.filter_size, 1, padding=filter_size // 2)
        self.oc_weight = nn.Parameter(torch.randn((self.num_hidden, self.height, self.width)))
        self.bn_h_concat = tensor_layer_norm(self.num_hidden * 4)
        self.bn_x_concat = tensor_layer_norm(self.num_hidden * 4)

    def init_state(self):
        shape = [self.batch, self.num_hidden, self.height, self.width]
        return torch.zeros(shape, dtype=torch.float32)

    def forward(self, x, h_t, c_t):
        if h_t is None:
            h_t = self.init_state()
        if c_t is None:
            c_t = self.init_state()

        h_concat = self.h_t(h_t)
        if self.layer_norm:
            h_concat = self.bn_h_concat(h_concat)
        i_h, g_h, f_h, o_h = torch.split(h_concat, self.num_hidden, 1)

        ct_activation = torch.mul(c_t.repeat([1, 2, 1, 1]), self.ct_weight)
        i_c, f_c = torch.split(ct_activation, self.num_hidden, 1)

        i_ = i_h + i_c
        f_ = f_h + f_c
        g_ = g_h
        o_ = o_h

        if x is not None:
            x_concat = self.x(x)
            if self.layer_norm:
                x_concat = self.bn_x_concat(x_concat)
            i_x, g_x, f_x, o_x = torch.split(x_concat, self.num_hidden, 1)

            i_ += i_x
            f_ += f_x
            g_ += g_x  # expect: ADL015
            o_ += o_x  # expect: ADL015

        i_ = torch.sigmoid(i_)
        f_ = torch.sigmoid(f_ + self._forget_bias)
        c_new = f_ * c_t + i_ * torch.tanh(g_)

        o_c = torch.mul(c_new, self.oc_weight)
        h_new = torch.sigmoid(o_ + o_c) * torch.tanh(c_new)
        return h_new, c_new


def run():
    torch.manual_seed(0)
    seq_shape = [2, 4, 4, 8, 8]
    cell = MIMN('stlstm_diff1', 5, 4, seq_shape, tln=True)
    frames = torch.rand(2, 4, 4, 8, 8)
    h_t, c_t = None, None
    for t in range(1, 4):
        h_t, c_t = cell(frames[:, t] - frames[:, t - 1], h_t, c_t)
    h_t.sum().backward()
