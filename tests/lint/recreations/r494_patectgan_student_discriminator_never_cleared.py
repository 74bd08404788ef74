"""smartnoise-sdk's PATECTGAN trains its student discriminator on the
teachers' noisy votes: for each student iteration it generates fake rows,
asks the teachers (`pate`), and backpropagates the student's loss
`loss_s.backward()` and steps `optimizer_s`, without the
`optimizer_s.zero_grad()` that CTGAN and PATEGAN call: each student step
applies the sum of all the student's gradients so far.  Nothing raises; the
maintainer confirmed the bug and fixed it.
Buggy line: `loss_s.backward()` in the student loop without a clear before it.
Source: https://github.com/opendp/smartnoise-sdk/issues/280"""
import torch
import torch.nn as nn


def pate(data, teachers, lap_scale):
    with torch.no_grad():
        votes = torch.stack([(t(data) > 0).float().squeeze(1) for t in teachers], dim=1)
    counts = votes.sum(1) + torch.distributions.Laplace(0.0, lap_scale).sample((data.size(0),))
    return (counts > len(teachers) / 2).float().unsqueeze(1), votes


class PATECTGANSynthesizer:
    def __init__(self, embedding_dim=4, data_dim=6, num_teachers=3, student_iters=3):
        torch.manual_seed(0)
        self.embedding_dim = embedding_dim
        self._generator = nn.Sequential(nn.Linear(embedding_dim, 8), nn.ReLU(), nn.Linear(8, data_dim))
        self.teacher_disc = [nn.Linear(data_dim, 1) for _ in range(num_teachers)]
        self.student_disc = nn.Sequential(nn.Linear(data_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.optimizer_s = torch.optim.Adam(self.student_disc.parameters(), lr=2e-4)
        self.student_iters = student_iters
        self.record = []

    def train_student(self, batch_size=4, noise_multiplier=1e-3):
        criterion = nn.BCEWithLogitsLoss()
        for j in range(self.student_iters):
            fakez = torch.randn(batch_size, self.embedding_dim)
            fake = self._generator(fakez)
            predictions, votes = pate(fake, self.teacher_disc, noise_multiplier)
            output = self.student_disc(fake.detach())
            loss_s = criterion(output, predictions)
            if self.student_disc[0].weight.grad is not None:  # what this student step starts from
                self.record.append(self.student_disc[0].weight.grad.clone())
            loss_s.backward()
            self.optimizer_s.step()  # expect: ADL018
        return loss_s.item()


def bug_shows():
    """Each student step after the first starts from the previous steps' gradients."""
    synth = PATECTGANSynthesizer()
    synth.train_student()
    return len(synth.record) == 2 and all(g.abs().sum().item() > 0 for g in synth.record)
