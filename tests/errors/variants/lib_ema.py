"""Exponential moving average of a student's weights (helper of ema_teacher_updated_by_helper_without_no_grad)."""


def update_teacher(teacher, student, decay):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s.detach(), alpha=1 - decay)  # PRIMARY
