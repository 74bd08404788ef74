"""Person re-identification with a part-based convolutional baseline (PCB): the feature map is cut
into six horizontal stripes, each stripe has its own classifier and cross-entropy loss, and the
trainer back-propagates the six losses together with
`torch.autograd.backward([loss0, ..., loss5], [torch.ones(1), ...])`. On a PyTorch newer than the
repository's, each loss is a 0-d tensor and a seed of shape [1] is refused: "Mismatch in shape:
grad_output[0] has a shape of torch.Size([1]) and output[0] has a shape of torch.Size([])". The
change given for this pattern: 0-d seeds, `torch.tensor(1.)`.
Source: https://github.com/syfafterzy/PCB_RPP_for_reID/issues/16
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PCBModel(nn.Module):
    def __init__(self, num_stripes=6, local_conv_out_channels=8, num_classes=5):
        super().__init__()
        self.num_stripes = num_stripes
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.local_conv = nn.Sequential(nn.Conv2d(16, local_conv_out_channels, 1),
                                        nn.BatchNorm2d(local_conv_out_channels), nn.ReLU())
        self.instance = nn.ModuleList([nn.Linear(local_conv_out_channels, num_classes)
                                       for _ in range(num_stripes)])

    def forward(self, x):
        feat = self.base(x)
        stripe_h = feat.size(2) // self.num_stripes
        logits_list = []
        for i in range(self.num_stripes):
            local_feat = F.avg_pool2d(feat[:, :, i * stripe_h:(i + 1) * stripe_h, :],
                                      (stripe_h, feat.size(-1)))
            local_feat = self.local_conv(local_feat).view(local_feat.size(0), -1)
            logits_list.append(self.instance[i](local_feat))
        return logits_list


class Trainer:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def train(self, epoch, data_loader, optimizer):
        self.model.train()
        losses = []
        for i, (imgs, pids) in enumerate(data_loader):
            outputs = self.model(imgs)
            loss0 = self.criterion(outputs[0], pids)
            loss1 = self.criterion(outputs[1], pids)
            loss2 = self.criterion(outputs[2], pids)
            loss3 = self.criterion(outputs[3], pids)
            loss4 = self.criterion(outputs[4], pids)
            loss5 = self.criterion(outputs[5], pids)
            optimizer.zero_grad()
            torch.autograd.backward([loss0, loss1, loss2, loss3, loss4, loss5],
                                    [torch.tensor(1.), torch.tensor(1.), torch.tensor(1.),
                                     torch.tensor(1.), torch.tensor(1.), torch.tensor(1.)])
            optimizer.step()
            losses.append(sum(l.item() for l in (loss0, loss1, loss2, loss3, loss4, loss5)))
        return losses


model = PCBModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(24, 3, 24, 8)
person_ids = torch.randint(0, 5, (24,))
loader = [(images[i:i + 8], person_ids[i:i + 8]) for i in range(0, 24, 8)]

trainer = Trainer(model, nn.CrossEntropyLoss())
losses = []
for epoch in range(2):
    losses += trainer.train(epoch, loader, optimizer)

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in model.parameters()]}
