"""Fine-tuning Ultra-Fast-Lane-Detection on a small data set (cfzd/Ultra-Fast-Lane-Detection's
train.py, `if cfg.finetune is not None:` branch): after loading the pretrained backbone weights
(the `model.*` keys of the checkpoint), the user freezes the backbone with a loop over the
parameters of the whole network instead of those of its backbone `net.model`. Every parameter,
the classification head included, stops requiring grad, the loss has no graph, and `loss.backward()`
raises "element 0 of tensors does not require grad and does not have a grad_fn".
Source: https://github.com/cfzd/Ultra-Fast-Lane-Detection/issues/282 ("模型冻结" (freezing the model):
the loop `for param in model.parameters(): param.requires_grad = False` raises the RuntimeError; the
maintainer: filter the frozen parameters out of the optimizer,
`filter(lambda p: p.requires_grad, net.parameters())`; the user: "I finally changed it to
`for param in net.model.parameters()`").
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

GRIDING_NUM, ROWS, LANES = 10, 4, 2


class ParsingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())   # backbone
        self.pool = nn.Conv2d(8, 4, 1)
        self.cls = nn.Sequential(nn.Linear(4 * 4 * 4, 32), nn.ReLU(),
                                 nn.Linear(32, (GRIDING_NUM + 1) * ROWS * LANES))

    def forward(self, img):
        features = self.pool(self.model(img)).flatten(1)
        return self.cls(features).view(-1, GRIDING_NUM + 1, ROWS, LANES)


net = ParsingNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

# finetune: load the backbone ("model.*") weights of a pretrained checkpoint, then freeze the backbone
pretrained = {k: v.clone() for k, v in ParsingNet().state_dict().items() if "model" in k}
net.load_state_dict(pretrained, strict=False)
for param in net.parameters():
    param.requires_grad = False

criterion = nn.CrossEntropyLoss()
losses = []
for step in range(4):
    img = torch.randn(4, 3, 16, 16)
    cls_label = torch.randint(0, GRIDING_NUM + 1, (4, ROWS, LANES))
    loss = criterion(net(img), cls_label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in net.parameters()]}
