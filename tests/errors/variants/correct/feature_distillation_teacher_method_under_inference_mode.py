# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference
#   mode in computation tracked by autograd. To work around this, you can make a clone to get a normal
#   tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved_decorator)
# set: 14
# trigger: feature distillation: a Distiller's teacher_features method is decorated with
#   @torch.inference_mode() (the teacher is frozen); its features are the target of F.mse_loss, which
#   saves the target for the student's gradient
# source: none found; the pattern as users write it (inference_mode taken for a faster no_grad)
# results: student, losses
import torch
import torch.nn.functional as F
from torch import nn


class Distiller:
    def __init__(self, teacher, student):
        self.teacher, self.student = teacher, student
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.1)

    @torch.no_grad()  # PRIMARY
    def teacher_features(self, x):
        return self.teacher(x)

    def step(self, x):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.student(x), self.teacher_features(x))
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3)).requires_grad_(False)
student = nn.Linear(4, 3)
distiller = Distiller(teacher, student)
x = torch.randn(5, 4)
losses = [distiller.step(x) for _ in range(3)]
