"""Mobile video object detection with a Bottleneck-LSTM (vikrant7/mobile-vod-bottleneck-lstm#25): the
network keeps the LSTM's hidden and cell state as module attributes that carry over from one frame
to the next. The training script unrolls each clip frame by frame and, for every frame, calls
`loss.backward(retain_graph=True)` and `optimizer.step()`; but `net.detach_hidden()` sits in the
outer loop, after the whole clip. From the second frame on, backward runs on into the previous
frame's graph, whose convolution weights the optimizer has since updated in place: "one of the
variables needed for gradient computation has been modified by an inplace operation" (the thread
notes it is reported inside a convolution, not an activation). The answer in the thread (hebangwen)
moves `net.detach_hidden()` into the inner loop, next to the per-frame loss bookkeeping.
Source: https://github.com/vikrant7/mobile-vod-bottleneck-lstm/issues/25
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super().__init__()
        self.W = nn.Conv2d(input_channels, input_channels, 3, padding=1, groups=input_channels, bias=False)
        self.Wy = nn.Conv2d(input_channels + hidden_channels, hidden_channels, 1)
        self.Wi = nn.Conv2d(hidden_channels, hidden_channels, 3, padding=1, groups=hidden_channels, bias=False)
        self.Wbi = nn.Conv2d(hidden_channels, hidden_channels, 1, bias=False)
        self.Wbf = nn.Conv2d(hidden_channels, hidden_channels, 1, bias=False)
        self.Wbc = nn.Conv2d(hidden_channels, hidden_channels, 1, bias=False)
        self.Wbo = nn.Conv2d(hidden_channels, hidden_channels, 1, bias=False)

    def forward(self, x, h, c):
        x = self.W(x)
        y = torch.cat((x, h), 1)
        i = self.Wy(y)
        b = self.Wi(i)
        ci = torch.sigmoid(self.Wbi(b))
        cf = torch.sigmoid(self.Wbf(b))
        cc = cf * c + ci * F.relu6(self.Wbc(b))
        co = torch.sigmoid(self.Wbo(b))
        ch = co * F.relu6(cc)
        return ch, cc


class BottleneckLSTM(nn.Module):
    def __init__(self, input_channels, hidden_channels, height, width, batch_size):
        super().__init__()
        self.cell = BottleneckLSTMCell(input_channels, hidden_channels)
        self.hidden_state = torch.zeros(batch_size, hidden_channels, height, width)
        self.cell_state = torch.zeros(batch_size, hidden_channels, height, width)

    def forward(self, x):
        new_h, new_c = self.cell(x, self.hidden_state, self.cell_state)
        self.hidden_state = new_h
        self.cell_state = new_c
        return new_h


class MobileVOD(nn.Module):
    def __init__(self, num_classes, batch_size):
        super().__init__()
        self.num_classes = num_classes
        self.base_net = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.bottleneck_lstm1 = BottleneckLSTM(16, 8, 4, 4, batch_size)
        self.classification_header = nn.Conv2d(8, 3 * num_classes, 1)
        self.regression_header = nn.Conv2d(8, 3 * 4, 1)

    def forward(self, x):
        x = self.base_net(x)
        x = self.bottleneck_lstm1(x)
        confidence = self.classification_header(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, self.num_classes)
        locations = self.regression_header(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, 4)
        return confidence, locations

    def detach_hidden(self):
        self.bottleneck_lstm1.hidden_state.detach_()
        self.bottleneck_lstm1.cell_state.detach_()


def multibox_loss(confidence, predicted_locations, labels, gt_locations):
    classification_loss = F.cross_entropy(confidence.reshape(-1, confidence.size(2)), labels.reshape(-1))
    pos_mask = labels > 0
    regression_loss = F.smooth_l1_loss(predicted_locations[pos_mask], gt_locations[pos_mask])
    return regression_loss, classification_loss


def make_loader(num_batches=2, seq_len=3, batch_size=2, num_classes=3):
    loader = []
    for _ in range(num_batches):
        images = torch.rand(seq_len, batch_size, 3, 16, 16)
        boxes = torch.rand(seq_len, batch_size, 48, 4)
        labels = torch.randint(0, num_classes, (seq_len, batch_size, 48))
        loader.append((images, boxes, labels))
    return loader


def train(loader, net, criterion, optimizer):
    net.train(True)
    losses = []
    for i, data in enumerate(loader):
        images, boxes, labels = data
        for image, box, label in zip(images, boxes, labels):
            optimizer.zero_grad()
            confidence, locations = net(image)
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            loss = regression_loss + classification_loss
            loss.backward(retain_graph=True)
            optimizer.step()
            losses.append(loss.detach())
            net.detach_hidden()
    return losses


net = MobileVOD(num_classes=3, batch_size=2)
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3)
losses = train(make_loader(), net, multibox_loss, optimizer)
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]}
