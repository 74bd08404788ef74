"""A hyper-network quality model: a backbone extracts features and a hyper-network head predicts
the weights of a small target network that scores them. The solver keeps the head's parameters as
`filter(lambda p: id(p) not in backbone_ids, model.parameters())` and rebuilds the Adam optimizer
after every epoch to decay the learning rate. A filter object is an iterator: the first optimizer
consumes it, and every rebuilt optimizer gets an empty group for the head, so after the first
epoch only the backbone trains. Nothing raises.
Source: https://github.com/SSL92/hyperIQA/issues/32 ("HyperNetWork is not being trained":
`self.hypernet_params` is an iterator, empty after the optimizer is initialised, so after the first
epoch the optimizer does not optimise the hyper-network; making it a list fixes it).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HyperQualityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.hyper_weight = nn.Linear(16, 16 * 4)
        self.hyper_bias = nn.Linear(16, 4)
        self.head_out = nn.Linear(4, 1)

    def forward(self, x):
        features = self.backbone(x)
        w = self.hyper_weight(features).view(-1, 4, 16)
        b = self.hyper_bias(features)
        hidden = torch.relu(torch.einsum("nij,nj->ni", w, features) + b)
        return self.head_out(hidden)


model = HyperQualityNet()
backbone_ids = list(map(id, model.backbone.parameters()))
hypernet_params = filter(lambda p: id(p) not in backbone_ids, model.parameters())
lr, lr_ratio = 1e-2, 10

images = torch.randn(64, 12)
scores = torch.randn(64, 1)
optimizer = torch.optim.Adam([{"params": hypernet_params, "lr": lr * lr_ratio},
                              {"params": model.backbone.parameters(), "lr": lr}])
losses = []
for epoch in range(3):
    for batch in torch.arange(64).split(16):
        optimizer.zero_grad()
        loss = F.l1_loss(model(images[batch]), scores[batch])
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    lr = lr / 2
    optimizer = torch.optim.Adam([{"params": hypernet_params, "lr": lr * lr_ratio},
                                  {"params": model.backbone.parameters(), "lr": lr}])

result = {"losses": torch.stack(losses), "head_out": model.head_out.weight.detach().clone(),
          "backbone": model.backbone[0].weight.detach().clone()}
