"""MIM (memory in memory, spatiotemporal prediction) in PyTorch, issue 1: "when applied to Moving
MNIST / radar echo data, GPU memory keeps accumulating".  `MIM.__init__` creates the recurrent
states as lists on the module (`self.hidden_state`, `self.cell_state`, `self.hidden_state_diff`,
`self.cell_state_diff`, `self.st_memory`), and `forward` rebinds them from themselves at every
time step (`self.hidden_state[0], self.cell_state[0], self.st_memory = self.stlstm_layer[0](x_gen,
self.hidden_state[0], self.cell_state[0], self.st_memory)`); nothing resets them between batches,
so the second batch's graph hangs on the first batch's, and its backward runs back into the first
batch's graph (whose saved weights the optimizer has since updated in place).
Re-created in my own words with the model's structure: the ST-LSTM first layer, MIM blocks and
MIMN difference cells (written with `torch.chunk` and out-of-place sums), the `MIM` stack with its
state lists, scheduled sampling of the input frames, and a training loop over batches.  The
repository's `self.gen_images` list is turned into a stacked tensor at the end of `forward`, so a
second call fails on `.append`; the re-creation starts each call from an empty list, as a user
running more than one batch has to.
Raises at the second batch's `loss.backward()` ("modified by an inplace operation": the first
batch's graph, reached through the kept states); buggy line: the state rebinding in `forward`.
Source: https://github.com/coolsunxu/MIM_Pytorch/issues/1"""
import torch
import torch.nn as nn


class SpatioTemporalLSTMCell(nn.Module):
    def __init__(self, num_hidden_in, num_hidden, in_channels):
        super().__init__()
        self.num_hidden = num_hidden
        self.x_cc = nn.Conv2d(in_channels, num_hidden * 7, 3, padding=1)
        self.h_cc = nn.Conv2d(num_hidden_in, num_hidden * 4, 3, padding=1)
        self.m_cc = nn.Conv2d(num_hidden_in, num_hidden * 3, 3, padding=1)
        self.o_cc = nn.Conv2d(num_hidden * 2, num_hidden, 1)

    def forward(self, x, h, c, m):
        if h is None:
            h = torch.zeros(x.shape[0], self.num_hidden, x.shape[2], x.shape[3])
        if c is None:
            c = torch.zeros_like(h)
        if m is None:
            m = torch.zeros_like(h)
        i_x, g_x, f_x, o_x, i_x_, g_x_, f_x_ = torch.chunk(self.x_cc(x), 7, dim=1)
        i_h, g_h, f_h, o_h = torch.chunk(self.h_cc(h), 4, dim=1)
        i_m, f_m, g_m = torch.chunk(self.m_cc(m), 3, dim=1)
        c_new = torch.sigmoid(f_x + f_h + 1.0) * c + torch.sigmoid(i_x + i_h) * torch.tanh(g_x + g_h)
        m_new = torch.sigmoid(f_x_ + f_m + 1.0) * m + torch.sigmoid(i_x_ + i_m) * torch.tanh(g_x_ + g_m)
        cell = self.o_cc(torch.cat([c_new, m_new], dim=1))
        h_new = torch.sigmoid(o_x + o_h) * torch.tanh(cell)
        return h_new, c_new, m_new


class MIMN(nn.Module):
    def __init__(self, num_hidden):
        super().__init__()
        self.num_hidden = num_hidden
        self.h_t = nn.Conv2d(num_hidden, num_hidden * 4, 3, padding=1)
        self.x = nn.Conv2d(num_hidden, num_hidden * 4, 3, padding=1)

    def forward(self, x, h_t, c_t):
        if h_t is None:
            h_t = torch.zeros_like(x)
        if c_t is None:
            c_t = torch.zeros_like(x)
        i_h, g_h, f_h, o_h = torch.chunk(self.h_t(h_t), 4, dim=1)
        i_x, g_x, f_x, o_x = torch.chunk(self.x(x), 4, dim=1)
        c_new = torch.sigmoid(f_h + f_x + 1.0) * c_t + torch.sigmoid(i_h + i_x) * torch.tanh(g_h + g_x)
        h_new = torch.sigmoid(o_h + o_x) * torch.tanh(c_new)
        return h_new, c_new


class MIMBlock(nn.Module):
    def __init__(self, num_hidden_in, num_hidden):
        super().__init__()
        self.cell = SpatioTemporalLSTMCell(num_hidden_in, num_hidden, num_hidden_in)
        self.diff_gate = nn.Conv2d(num_hidden, num_hidden, 1)

    def forward(self, x, diff_h, h, c, m):
        h_new, c_new, m_new = self.cell(x, h, c, m)
        if diff_h is not None:
            c_new = c_new + torch.tanh(self.diff_gate(diff_h))
        return h_new, c_new, m_new


class MIM(nn.Module):
    def __init__(self, shape, num_layers, num_hidden, total_length=6, input_length=4):
        super(MIM, self).__init__()
        self.num_layers = num_layers
        self.num_hidden = num_hidden
        self.total_length = total_length
        self.input_length = input_length
        self.output_channels = shape[-3]

        self.gen_images = []
        self.stlstm_layer = nn.ModuleList()
        self.stlstm_layer_diff = nn.ModuleList()
        self.cell_state = []
        self.hidden_state = []
        self.cell_state_diff = []
        self.hidden_state_diff = []

        for i in range(self.num_layers):
            if i < 1:
                new_stlstm_layer = SpatioTemporalLSTMCell(self.num_hidden[i], self.num_hidden[i], self.output_channels)
            else:
                new_stlstm_layer = MIMBlock(self.num_hidden[i - 1], self.num_hidden[i])
            self.stlstm_layer.append(new_stlstm_layer)
            self.cell_state.append(None)
            self.hidden_state.append(None)

        for i in range(self.num_layers - 1):
            self.stlstm_layer_diff.append(MIMN(self.num_hidden[i + 1]))
            self.cell_state_diff.append(None)
            self.hidden_state_diff.append(None)

        self.st_memory = None
        self.x_gen = nn.Conv2d(self.num_hidden[self.num_layers - 1], self.output_channels, 1)

    def forward(self, images, schedual_sampling_bool):
        self.gen_images = []
        for time_step in range(self.total_length - 1):
            if time_step < self.input_length:
                x_gen = images[:, time_step]
            else:
                x_gen = schedual_sampling_bool[:, time_step - self.input_length] * images[:, time_step] + \
                        (1 - schedual_sampling_bool[:, time_step - self.input_length]) * x_gen

            preh = self.hidden_state[0]
            self.hidden_state[0], self.cell_state[0], self.st_memory = self.stlstm_layer[0](  # expect: ADL017
                x_gen, self.hidden_state[0], self.cell_state[0], self.st_memory)

            for i in range(1, self.num_layers):
                if time_step > 0:
                    if i == 1:
                        self.hidden_state_diff[i - 1], self.cell_state_diff[i - 1] = self.stlstm_layer_diff[i - 1](
                            self.hidden_state[i - 1] - preh, self.hidden_state_diff[i - 1], self.cell_state_diff[i - 1])
                    else:
                        self.hidden_state_diff[i - 1], self.cell_state_diff[i - 1] = self.stlstm_layer_diff[i - 1](
                            self.hidden_state_diff[i - 2], self.hidden_state_diff[i - 1], self.cell_state_diff[i - 1])
                else:
                    self.stlstm_layer_diff[i - 1](torch.zeros_like(self.hidden_state[i - 1]), None, None)

                preh = self.hidden_state[i]
                self.hidden_state[i], self.cell_state[i], self.st_memory = self.stlstm_layer[i](
                    self.hidden_state[i - 1], self.hidden_state_diff[i - 1], self.hidden_state[i],
                    self.cell_state[i], self.st_memory)

            x_gen = self.x_gen(self.hidden_state[self.num_layers - 1])
            self.gen_images.append(x_gen)

        gen_images = torch.stack(self.gen_images, dim=1)
        loss = nn.MSELoss()(gen_images, images[:, 1:])
        return [gen_images, loss]


def run():
    torch.manual_seed(0)
    shape = [2, 6, 1, 8, 8]
    model = MIM(shape, num_layers=2, num_hidden=[4, 4])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for itr in range(2):
        ims = torch.rand(2, 6, 1, 8, 8)
        real_input_flag = torch.ones(2, 1, 1, 8, 8)
        gen_images, loss = model(ims, real_input_flag)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
