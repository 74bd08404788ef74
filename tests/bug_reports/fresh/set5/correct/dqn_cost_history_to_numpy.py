"""Deep Q-Network tutorial: every learning step appends the loss tensor itself to `cost_his`, and
the training curve is made with numpy at the end; the losses still require grad.
Source: https://github.com/ClownW/Reinforcement-learning-with-PyTorch/issues/3 ("Can't call numpy()
on Tensor that requires grad"; answer: detach the loss after backward before plotting it).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
eval_net = nn.Sequential(nn.Linear(4, 10), nn.ReLU(), nn.Linear(10, 2))
target_net = nn.Sequential(nn.Linear(4, 10), nn.ReLU(), nn.Linear(10, 2))
target_net.load_state_dict(eval_net.state_dict())
optimizer = torch.optim.RMSprop(eval_net.parameters(), lr=0.01)
loss_func = nn.MSELoss()

cost_his = []
for step in range(6):
    s, s_ = torch.randn(8, 4), torch.randn(8, 4)
    a, r = torch.randint(0, 2, (8, 1)), torch.randn(8)
    q_eval = eval_net(s).gather(1, a).squeeze(1)
    q_target = r + 0.9 * target_net(s_).max(1)[0].detach()
    loss = loss_func(q_eval, q_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    cost_his.append(loss.detach())

curve = np.array([c.numpy() for c in cost_his])
result = {"curve": torch.from_numpy(curve), "params": [p.detach() for p in eval_net.parameters()]}
