"""Knowledge distillation of a small detector from a larger one with a feature "hint" loss
(Syencil/mobile-yolov5-pruning-distillation, train.py): forward hooks keep a backbone feature map
of each network; the student's map goes through a 1x1 converter to the teacher's width and an MSE
pulls it towards the teacher's. The student's hint was computed inside the `with torch.no_grad():`
block that runs the teacher, so it carries no graph: the feature-distillation term adds to the loss
value and trains nothing (neither the student's backbone nor the converter). Nothing is raised; the
README noted that the mAP with feature distillation was "almost exactly the same" as without.
Source: https://github.com/Syencil/mobile-yolov5-pruning-distillation/issues/83 ("the results of
output-based + feature distillation are the same as output-based only ... found the cause");
commit 01a0900 ("fix some grad bugs") moves the student's side of the hint out of the no_grad block.
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Detector(nn.Module):
    def __init__(self, width, hint_width=None):
        super().__init__()
        self.backbone = nn.Conv2d(3, width, 3, padding=1)
        self.head = nn.Conv2d(width, 5, 1)  # box (4) + objectness (1) per cell
        self.converter = nn.Conv2d(width, hint_width, 1) if hint_width else None

    def forward(self, images):
        return self.head(torch.relu(self.backbone(images)))


features = {}


def keep(name):
    def hook(module, inputs, output):
        features[name] = output
    return hook


student, teacher = Detector(4, hint_width=8), Detector(8)
student.backbone.register_forward_hook(keep("student"))
teacher.backbone.register_forward_hook(keep("teacher"))
optimizer = torch.optim.SGD(student.parameters(), lr=0.05)
images = torch.randn(2, 3, 6, 6)
targets = torch.randn(2, 5, 6, 6)

losses = []
for step in range(3):
    optimizer.zero_grad()
    pred = student(images)
    with torch.no_grad():
        t_pred = teacher(images)
        s_hint = student.converter(features["student"])
    t_hint = features["teacher"]
    loss = F.mse_loss(pred, targets) + F.mse_loss(pred, t_pred) + 0.5 * F.mse_loss(s_hint, t_hint)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in student.parameters()]}
