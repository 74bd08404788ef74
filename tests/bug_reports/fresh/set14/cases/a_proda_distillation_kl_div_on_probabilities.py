"""Self-distillation stage of ProDA, unsupervised domain adaptation for semantic segmentation
(microsoft/ProDA, models/adaptation_modelv2.py): the student is trained to match a frozen teacher
with `F.kl_div(student, teacher)`, where `student = F.softmax(target_out['out'], dim=1)`.
`F.kl_div` expects its first argument as log-probabilities; given probabilities it computes
`teacher * (log(teacher) - student)`, whose gradient pushes every class's probability up in
proportion to the teacher's, not towards the teacher's distribution. Training runs and the loss
goes down; the distillation is wrong and nothing is raised.
Source: https://github.com/microsoft/ProDA/issues/20 (answer: "the code in this line should be
changed to: student = F.log_softmax(target_out['out'], dim=1). It's a bug.").
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, SIZE, BATCH = 5, 6, 2


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.classifier = nn.Conv2d(8, CLASSES, 1)

    def forward(self, x):
        return {"out": self.classifier(self.backbone(x))}


teacher_model = SegNet()
student_model = copy.deepcopy(teacher_model)
for p in teacher_model.parameters():
    p.requires_grad_(False)
# The student starts from the adapted teacher but sees strongly augmented target images.
optimizer = torch.optim.SGD(student_model.parameters(), lr=0.5)
target_images = torch.randn(BATCH, 3, SIZE, SIZE)
strong_aug = target_images + 0.3 * torch.randn_like(target_images)

losses = []
for step in range(3):
    optimizer.zero_grad()
    with torch.no_grad():
        teacher_out = teacher_model(target_images)
        teacher = F.softmax(teacher_out["out"], dim=1)
    target_out = student_model(strong_aug)
    student = F.softmax(target_out["out"], dim=1)
    loss_kd = F.kl_div(student, teacher, reduction="none")
    loss_kd = loss_kd.sum(dim=1).mean()
    loss_kd.backward()
    optimizer.step()
    losses.append(loss_kd.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in student_model.parameters()]}
