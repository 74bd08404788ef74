"""Stand-alone self-attention for vision (a ResNet whose 3x3 convolutions are replaced by local
attention, `AttentionConv`): the learned relative position embeddings `rel_h` and `rel_w` are created
inside `forward()`, `self.rel_h = nn.Parameter(torch.randn(...))`. Every call draws new random
embeddings, so whatever the optimizer did to them is thrown away, the optimizer (built before the
first forward) never holds them, and the values the attention adds are fresh noise at every step.
Nothing raises; the position embeddings never learn.
Source: https://github.com/leaderj1001/Stand-Alone-Self-Attention/issues/2 ("rel_w and rel_h
parameters": "You create these parameters every time you pass through forward so theirs previous
values are lost. I think these parameters should be created once in __init__"; author: "Thanks for
your comment ! I will fix it as soon as possible").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AttentionConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, groups=1):
        super().__init__()
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.padding = padding
        self.groups = groups
        self.rel_h = nn.Parameter(torch.randn(out_channels // 2, 1, 1, kernel_size, 1))
        self.rel_w = nn.Parameter(torch.randn(out_channels // 2, 1, 1, 1, kernel_size))
        self.key_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.query_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.value_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        batch, channels, height, width = x.size()

        padded_x = F.pad(x, [self.padding, self.padding, self.padding, self.padding])
        q_out = self.query_conv(x)
        k_out = self.key_conv(padded_x)
        v_out = self.value_conv(padded_x)
        k_out = k_out.unfold(2, self.kernel_size, 1).unfold(3, self.kernel_size, 1)
        v_out = v_out.unfold(2, self.kernel_size, 1).unfold(3, self.kernel_size, 1)
        v_out_h, v_out_w = v_out.split(self.out_channels // 2, dim=1)
        v_out = torch.cat((v_out_h + self.rel_h, v_out_w + self.rel_w), dim=1)
        k_out = k_out.contiguous().view(batch, self.groups, self.out_channels // self.groups, height, width, -1)
        v_out = v_out.contiguous().view(batch, self.groups, self.out_channels // self.groups, height, width, -1)
        q_out = q_out.view(batch, self.groups, self.out_channels // self.groups, height, width, 1)
        out = F.softmax(q_out * k_out, dim=-1)
        return torch.einsum('bnchwk,bnchwk -> bnchw', out, v_out).view(batch, -1, height, width)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.attention = AttentionConv(8, 8, kernel_size=3, padding=1, groups=2)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = F.relu(self.attention(x))
        return self.head(x.mean(dim=(2, 3)))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(8, 3, 8, 8)
labels = torch.randint(0, 4, (8,))

losses = []
for step in range(4):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
