"""FairMOT-style joint detection and re-identification training for multi-object tracking
(ifzhang/FairMOT's `MotLoss` and trainer): the detection and identity losses are balanced by
learned uncertainty weights (Kendall et al.), `s_det` and `s_id`, which are `nn.Parameter`s of the
loss module. The optimizer was built in train.py from `model.parameters()` only, and the trainer
wraps model and loss together without handing the loss's parameters to it: backward() fills
`s_det.grad` and `s_id.grad` at every step, but `step()` never moves them, so the task weights
stay at their initial values. No error. The maintainer: "Thank you very much for your question!
I have added the parameters to optimizer and fixed the bug" (the trainer adds the loss's
parameters as a parameter group).
Source: https://github.com/ifzhang/FairMOT/issues/19
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_IDS, EMB_DIM = 10, 16


class TinyDLA(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.hm = nn.Conv2d(16, 1, 1)
        self.wh = nn.Conv2d(16, 2, 1)
        self.id = nn.Conv2d(16, EMB_DIM, 1)

    def forward(self, x):
        feat = self.base(x)
        return {"hm": self.hm(feat), "wh": self.wh(feat), "id": self.id(feat)}


class MotLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(EMB_DIM, NUM_IDS)
        self.emb_scale = (2 ** 0.5) * torch.log(torch.tensor(NUM_IDS - 1.0)).item()
        self.s_det = nn.Parameter(-1.85 * torch.ones(1))
        self.s_id = nn.Parameter(-1.05 * torch.ones(1))

    def forward(self, output, batch):
        hm_loss = F.binary_cross_entropy_with_logits(output["hm"], batch["hm"])
        wh_loss = F.l1_loss(output["wh"], batch["wh"])
        det_loss = hm_loss + 0.1 * wh_loss
        ys, xs = batch["centers"][:, 0], batch["centers"][:, 1]
        id_head = output["id"][torch.arange(len(ys)), :, ys, xs]
        id_head = self.emb_scale * F.normalize(id_head, dim=1)
        id_loss = F.cross_entropy(self.classifier(id_head), batch["ids"])
        loss = torch.exp(-self.s_det) * det_loss + torch.exp(-self.s_id) * id_loss + (self.s_det + self.s_id)
        loss = 0.5 * loss
        return loss.squeeze(), {"loss": loss.squeeze(), "det_loss": det_loss, "id_loss": id_loss}


class ModelWithLoss(nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch):
        outputs = self.model(batch["input"])
        loss, loss_stats = self.loss(outputs, batch)
        return outputs, loss, loss_stats


class MotTrainer:
    def __init__(self, model, optimizer):
        self.optimizer = optimizer
        self.loss = MotLoss()
        self.model_with_loss = ModelWithLoss(model, self.loss)

    def run_epoch(self, data_loader, history):
        self.model_with_loss.train()
        for batch in data_loader:
            _, loss, loss_stats = self.model_with_loss(batch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            history.append(loss_stats["loss"].item())


def make_batch(batch_size=4, size=8):
    centers = torch.randint(0, size, (batch_size, 2))
    hm = torch.zeros(batch_size, 1, size, size)
    hm[torch.arange(batch_size), 0, centers[:, 0], centers[:, 1]] = 1.0
    return {
        "input": torch.randn(batch_size, 3, size, size),
        "hm": hm,
        "wh": torch.rand(batch_size, 2, size, size),
        "centers": centers,
        "ids": torch.randint(0, NUM_IDS, (batch_size,)),
    }


model = TinyDLA()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
trainer = MotTrainer(model, optimizer)
data_loader = [make_batch() for _ in range(4)]

losses = []
for epoch in range(3):
    trainer.run_epoch(data_loader, losses)

result = {
    "losses": torch.tensor(losses),
    "s_det": trainer.loss.s_det.detach().clone(),
    "s_id": trainer.loss.s_id.detach().clone(),
    "model": [p.detach().clone() for p in model.parameters()],
    "classifier": [p.detach().clone() for p in trainer.loss.classifier.parameters()],
}
