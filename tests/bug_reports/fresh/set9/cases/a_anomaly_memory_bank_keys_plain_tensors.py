"""Unsupervised anomaly detection by reverse distillation with a normality memory (Remembering
Normality's models/memoryModule.py): the memory's keys and values are created in `__init__` as
plain tensors, `self.keys = torch.randn(L, channel)`, not `nn.Parameter`s. They are not in
`student.parameters()`, do not require grad, and stay at their random initial values for the whole
training while the rest of the student trains around them (no error, no warning).
Source: https://github.com/SimonThomine/RememberingNormality/issues/7 ("The code in the module is
not wrapped with nn.Parameter(). The parameters do not seem to be recognized as neural networks but
remain unchanged as randomly initialized parameters"; the author: "You're right, I cant believe I
missed this error", fixed in commit 1d99145 by making keys and values `nn.Parameter`s).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MemoryModule(nn.Module):
    def __init__(self, L=10, channel=8):
        super().__init__()
        self.keys = torch.randn(L, channel)
        self.values = torch.randn(L, channel)
        self.channel = channel

    def forward(self, x):
        b, c, h, w = x.size()
        x = x.view(b, c, -1).permute(0, 2, 1)
        keys = F.normalize(self.keys.unsqueeze(0).expand(b, -1, -1), p=2, dim=2)
        cos_sim = torch.matmul(keys.unsqueeze(2), F.normalize(x, p=2, dim=2).transpose(1, 2).unsqueeze(1)).squeeze(2)
        sim_vec = F.softmax(cos_sim, dim=1)
        values = self.values.unsqueeze(0).expand(b, -1, -1)
        return torch.matmul(sim_vec.permute(0, 2, 1), values).permute(0, 2, 1).reshape(b, self.channel, h, w)


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Conv2d(3, 8, 3, padding=1)
        self.memory = MemoryModule()
        self.decode = nn.Conv2d(16, 8, 3, padding=1)

    def forward(self, image):
        features = F.relu(self.encode(image))
        return self.decode(torch.cat([features, self.memory(features)], dim=1))


teacher = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)
student = Student()
optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)
images = torch.rand(4, 3, 8, 8)
losses = []
for epoch in range(4):
    target = teacher(images)
    output = student(images)
    loss = (1 - F.cosine_similarity(output.flatten(1), target.flatten(1))).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in student.parameters()],
          "memory": [student.memory.keys.detach().clone(), student.memory.values.detach().clone()]}
