"""Hopenet (deep-head-pose) trains three heads (yaw, pitch, roll; 66 angle bins each) with a
cross-entropy loss plus `alpha` times the MSE of the expected angle, and backpropagates the three
losses at once: `torch.autograd.backward(loss_seq, grad_seq)` with
`grad_seq = [torch.ones(1).cuda(gpu) for _ in range(len(loss_seq))]`. Written for PyTorch 0.3,
where a loss was a one-element tensor; since 0.4 the losses are 0-dim and the call fails with
"Mismatch in shape: grad_output[0] has a shape of torch.Size([1]) and output[0] has a shape of
torch.Size([])" (earlier "invalid gradient at index 0 - expected shape [] but got [1]"). The fix
the reporters give: `grad_seq = [torch.tensor(1.0).cuda(gpu) for _ in range(len(loss_seq))]`.
Source: https://github.com/natanielruiz/deep-head-pose/issues/124
(also https://github.com/natanielruiz/deep-head-pose/issues/49 and /issues/85)
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Hopenet(nn.Module):
    def __init__(self, num_bins=66):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.fc_yaw = nn.Linear(64, num_bins)
        self.fc_pitch = nn.Linear(64, num_bins)
        self.fc_roll = nn.Linear(64, num_bins)

    def forward(self, x):
        x = self.features(x)
        return self.fc_yaw(x), self.fc_pitch(x), self.fc_roll(x)


model = Hopenet()
criterion = nn.CrossEntropyLoss()
reg_criterion = nn.MSELoss()
alpha = 0.001
softmax = nn.Softmax(dim=1)
idx_tensor = torch.FloatTensor([idx for idx in range(66)])
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

losses = []
for i in range(4):
    images = torch.randn(8, 32)
    cont_labels = torch.rand(8, 3) * 196 - 98
    labels = ((cont_labels + 99) // 3).long().clamp(0, 65)
    label_yaw, label_pitch, label_roll = labels[:, 0], labels[:, 1], labels[:, 2]
    label_yaw_cont, label_pitch_cont, label_roll_cont = cont_labels[:, 0], cont_labels[:, 1], cont_labels[:, 2]

    yaw, pitch, roll = model(images)
    loss_yaw = criterion(yaw, label_yaw)
    loss_pitch = criterion(pitch, label_pitch)
    loss_roll = criterion(roll, label_roll)

    yaw_predicted = torch.sum(softmax(yaw) * idx_tensor, 1) * 3 - 99
    pitch_predicted = torch.sum(softmax(pitch) * idx_tensor, 1) * 3 - 99
    roll_predicted = torch.sum(softmax(roll) * idx_tensor, 1) * 3 - 99

    loss_yaw += alpha * reg_criterion(yaw_predicted, label_yaw_cont)
    loss_pitch += alpha * reg_criterion(pitch_predicted, label_pitch_cont)
    loss_roll += alpha * reg_criterion(roll_predicted, label_roll_cont)

    loss_seq = [loss_yaw, loss_pitch, loss_roll]
    grad_seq = [torch.tensor(1.0) for _ in range(len(loss_seq))]
    optimizer.zero_grad()
    torch.autograd.backward(loss_seq, grad_seq)
    optimizer.step()
    losses.append(torch.stack([loss_yaw, loss_pitch, loss_roll]).detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
