"""ViP (the Michigan video platform) trains with "pseudo batches": several minibatches' gradients are
accumulated, then every parameter's gradient is rescaled before the step, `param.grad *=
1./float(args['psuedo_batch_loop']*args['batch_size'])`. In a head-pose experiment only the yaw
output is regressed; the pitch and roll heads never enter the loss, so autograd leaves their
`.grad` at None and the rescaling raises "TypeError: unsupported operand type(s) for *=:
'NoneType' and 'float'".
Source: https://github.com/MichiganCOG/ViP/issues/21 ("Fails on zero grad": "In instances where a
neuron doesn't factor into the loss ... autograd returns None for the unused connections. This
results in a crash at the line `param.grad *= 1./float(...)` ... This can be remedied by inserting
`if param.grad is not None:`").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

args = {'psuedo_batch_loop': 2, 'batch_size': 4}


class HeadPoseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.yaw = nn.Linear(6, 1)
        self.pitch = nn.Linear(6, 1)
        self.roll = nn.Linear(6, 1)

    def forward(self, clips):
        features = self.backbone(clips)
        return self.yaw(features), self.pitch(features), self.roll(features)


model = HeadPoseNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
frames = torch.randn(3, args['psuedo_batch_loop'] * args['batch_size'], 3, 8, 8)
yaw_targets = torch.randn(3, args['psuedo_batch_loop'] * args['batch_size'], 1)

losses = []
for step in range(3):
    optimizer.zero_grad()
    for loop in range(args['psuedo_batch_loop']):
        batch = slice(loop * args['batch_size'], (loop + 1) * args['batch_size'])
        yaw, pitch, roll = model(frames[step, batch])
        # Only the yaw is regressed in this experiment.
        loss = F.mse_loss(yaw, yaw_targets[step, batch], reduction='sum')
        loss.backward()
        losses.append(loss.detach())
    for param in model.parameters():
        param.grad *= 1. / float(args['psuedo_batch_loop'] * args['batch_size'])
    optimizer.step()

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
