"""FlowModels' LADD notebook distils a teacher into a student flow model with
an adversarial loss: each iteration trains the discriminator (backward, step,
then `discriminator_optimizer.zero_grad()`), then the student, whose loss
runs through the discriminator's head.  The student's backward also fills
the discriminator's `.grad`; the student's block clears only the student's
optimizer, so those gradients stay and are added to the next iteration's
discriminator loss gradients, and `discriminator_optimizer.step()` applies
part of the student's objective to the discriminator.  Nothing raises.  The
fix clears the discriminator's gradients after the student's step (or before
its own backward).
Buggy line: the student's block ends with `student_optimizer.zero_grad()` only.
Source: https://github.com/leffff/FlowModels/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Discriminator(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(d, 8), nn.SiLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.head(x)


def ladd_step(student, teacher, discriminator, student_optimizer, discriminator_optimizer, x_0, x_1):
    t = torch.rand(x_0.size(0), 1)
    x_t = (1 - t) * x_0 + t * x_1
    # discriminator
    with torch.no_grad():
        x_1_approx = x_t + (1 - t) * student(x_t)
    real_logits = discriminator(teacher(x_1))
    fake_logits = discriminator(teacher(x_1_approx))
    discriminator_loss = F.relu(1 - real_logits).mean() + F.relu(1 + fake_logits).mean()
    discriminator_loss.backward()
    discriminator_optimizer.step()
    discriminator_optimizer.zero_grad()
    # student
    x_1_approx = x_t + (1 - t) * student(x_t)
    student_loss = -discriminator(teacher(x_1_approx)).mean()
    student_loss.backward()  # missed: ADL024
    torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
    student_optimizer.step()
    student_optimizer.zero_grad()
    return discriminator_loss.item(), student_loss.item()


def bug_shows():
    """The discriminator's gradient at its second step is not its own loss's gradient."""
    torch.manual_seed(0)
    student, teacher = nn.Linear(6, 6), nn.Linear(6, 6)
    teacher.requires_grad_(False)
    discriminator = Discriminator()
    s_opt = torch.optim.SGD(student.parameters(), lr=0.1)
    d_opt = torch.optim.SGD(discriminator.parameters(), lr=0.1)
    batches = [(torch.randn(4, 6), torch.randn(4, 6)) for _ in range(2)]
    ladd_step(student, teacher, discriminator, s_opt, d_opt, *batches[0])
    leftover = discriminator.head[0].weight.grad.clone()
    return leftover.abs().sum().item() > 0
