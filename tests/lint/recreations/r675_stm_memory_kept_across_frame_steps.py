"""PyTorch issue 31569 ("I cannot fix the error of variables has been modified by an inplace
operation"): a space-time-memory video segmentation model (`Encoder_M` for memory frames with
their masks, `Encoder_Q` for the query frame, a ResNet trunk with every ReLU's `inplace` turned
off) is trained with one backward per frame of a sample: "I need to use backward() twice in a
sample.  The code works fine at first backward.  But once I enter the second step, when I call
the loss.backward() it break down" with "[torch.FloatTensor [1024]] is at version 3; expected
version 2" (a trunk parameter, one version per `optimizer.step()`).  The memory keys and values
of the earlier frames are computed by `Encoder_M` with the graph kept and are read again by the
next frame's loss, which is backpropagated after the step that updated the encoder.
Re-created with small convolutional encoders in place of ResNet-50 (no pretrained weights), the
key/value projections, the memory read and a decoder head; the memory grows frame by frame as in
the reporter's training loop.
Buggy line: `optimizer.step()` inside the frame loop, between the memory's forward and the next
frame's backward through it.
Source: https://github.com/pytorch/pytorch/issues/31569"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def turn_off_relu_inplace(layer):
    for m in layer.modules():
        if isinstance(m, nn.ReLU):
            m.inplace = False
    return layer


def trunk(ch):
    return turn_off_relu_inplace(nn.Sequential(
        nn.Conv2d(ch, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True)))


class Encoder_M(nn.Module):
    def __init__(self):
        super(Encoder_M, self).__init__()
        self.conv1_m = nn.Conv2d(1, 3, kernel_size=3, padding=1, bias=False)
        self.conv1_o = nn.Conv2d(1, 3, kernel_size=3, padding=1, bias=False)
        self.res = trunk(3)

    def forward(self, in_f, in_m, in_o):
        f = in_f + self.conv1_m(in_m.unsqueeze(1)) + self.conv1_o(in_o.unsqueeze(1))
        return self.res(f)


class Encoder_Q(nn.Module):
    def __init__(self):
        super(Encoder_Q, self).__init__()
        self.res = trunk(3)

    def forward(self, in_f):
        return self.res(in_f)


class KeyValue(nn.Module):
    def __init__(self, indim, keydim, valdim):
        super(KeyValue, self).__init__()
        self.Key = nn.Conv2d(indim, keydim, kernel_size=3, padding=1)
        self.Value = nn.Conv2d(indim, valdim, kernel_size=3, padding=1)

    def forward(self, x):
        return self.Key(x), self.Value(x)


class Memory(nn.Module):
    def forward(self, m_in, m_out, q_in, q_out):
        B, D_e, T, H, W = m_in.size()
        mi = m_in.view(B, D_e, T * H * W).transpose(1, 2)
        qi = q_in.view(B, D_e, H * W)
        p = F.softmax(torch.bmm(mi, qi) / (D_e ** 0.5), dim=1)
        mo = m_out.view(B, m_out.size(1), T * H * W)
        mem = torch.bmm(mo, p).view(B, m_out.size(1), H, W)
        return torch.cat([mem, q_out], dim=1)


class STM(nn.Module):
    def __init__(self):
        super(STM, self).__init__()
        self.Encoder_M = Encoder_M()
        self.Encoder_Q = Encoder_Q()
        self.KV_M = KeyValue(16, keydim=8, valdim=16)
        self.KV_Q = KeyValue(16, keydim=8, valdim=16)
        self.Memory = Memory()
        self.Decoder = nn.Conv2d(32, 2, kernel_size=3, padding=1)

    def memorize(self, frame, mask):
        r4 = self.Encoder_M(frame, mask[:, 1], mask[:, 0])
        k4, v4 = self.KV_M(r4)
        return k4.unsqueeze(2), v4.unsqueeze(2)

    def segment(self, frame, keys, values):
        r4 = self.Encoder_Q(frame)
        k4, v4 = self.KV_Q(r4)
        m4 = self.Memory(keys, values, k4, v4)
        return self.Decoder(m4)


def train_sample(model, optimizer, frames, masks):
    keys, values = model.memorize(frames[:, 0], masks[:, 0])
    for t in range(1, frames.size(1)):
        logit = model.segment(frames[:, t], keys, values)
        loss = F.cross_entropy(logit, masks[:, t].argmax(1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()  # expect: ADL003
        new_k, new_v = model.memorize(frames[:, t], F.softmax(logit, dim=1))
        keys = torch.cat([keys, new_k], dim=2)
        values = torch.cat([values, new_v], dim=2)
    return loss


def run():
    torch.manual_seed(0)
    model = STM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    frames = torch.randn(1, 3, 3, 8, 8)
    labels = torch.randint(0, 2, (1, 3, 8, 8))
    masks = F.one_hot(labels, 2).permute(0, 1, 4, 2, 3).float()
    return train_sample(model, optimizer, frames, masks)


if __name__ == "__main__":
    run()
