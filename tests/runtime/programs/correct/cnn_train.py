import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
class Basic(nn.Module):
    expansion = 1
    def __init__(self, c_in, c, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c, 3, stride, 1, bias=False); self.bn1 = nn.BatchNorm2d(c); self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False); self.bn2 = nn.BatchNorm2d(c)
        self.down = None if stride == 1 and c_in == c else nn.Sequential(nn.Conv2d(c_in, c, 1, stride, bias=False), nn.BatchNorm2d(c))
    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.down is not None: identity = self.down(x)
        out += identity
        out = self.relu(out)
        return out
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), Basic(8, 8), Basic(8, 16, 2),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2, inplace=False), nn.Linear(16, 10))
for m in net.modules():
    if isinstance(m, nn.Conv2d): nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.BatchNorm2d): nn.init.constant_(m.weight, 1); nn.init.constant_(m.bias, 0)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
scaler_state = []
for step in range(3):
    x = torch.randn(4, 3, 16, 16); y = torch.randint(0, 10, (4,))
    x.sub_(x.mean()).div_(x.std())
    out = net(x)
    loss = F.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    for p in net.parameters():
        if p.grad is not None: p.grad.data.clamp_(-1, 1)
    opt.step()
    acc = (out.argmax(1) == y).float().mean()
    scaler_state.append(acc)
net.eval()
with torch.inference_mode():
    net(torch.randn(2, 3, 16, 16))
print("ok")
