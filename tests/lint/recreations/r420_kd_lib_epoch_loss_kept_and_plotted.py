"""A distillation library's student loop adds each batch's loss into the
epoch's total as a tensor, `epoch_loss += loss`, after `loss.backward()` and
the step; the total is appended to `loss_arr` once per epoch and the list is
plotted at the end.  The total links to the graph of every batch (the
autograd nodes held grow with the batches), the list keeps every epoch's
total, and the plot's conversion to NumPy of tensors that require grad
raises "Can't call numpy() on Tensor that requires grad".  The fix sums
`loss.item()`.  Found by the first run of set V (docs/lint.md,
twenty-fourth check), in eight loops of the library.
Source: https://github.com/SforAiDl/KD_Lib (KD_Lib/KD/vision/RCO/rco.py,
RCO.train_student)"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class StudentTrainer:
    def __init__(self):
        self.student_model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        self.teacher_model = nn.Linear(6, 3)
        self.optimizer_student = torch.optim.SGD(self.student_model.parameters(), lr=0.1)
        self.temperature = 2.0

    def calculate_kd_loss(self, student_out, teacher_out, label):
        soft = F.kl_div(F.log_softmax(student_out / self.temperature, dim=1),
                        F.softmax(teacher_out / self.temperature, dim=1), reduction="batchmean")
        return 0.5 * soft + 0.5 * F.cross_entropy(student_out, label)

    def train_student(self, train_loader, epochs=2):
        loss_arr = []
        for ep in range(epochs):
            epoch_loss = 0.0
            for data, label in train_loader:
                student_out = self.student_model(data)
                with torch.no_grad():
                    teacher_out = self.teacher_model(data)
                loss = self.calculate_kd_loss(student_out, teacher_out, label)
                self.optimizer_student.zero_grad()
                loss.backward()
                self.optimizer_student.step()
                epoch_loss += loss  # expect: ADL023
            loss_arr.append(epoch_loss)  # expect: ADL028
        return loss_arr


def batches(count):
    return [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(count)]


def run():
    torch.manual_seed(0)
    loss_arr = StudentTrainer().train_student(batches(4))
    np.asarray(loss_arr)  # what plt.plot(loss_arr) does first
