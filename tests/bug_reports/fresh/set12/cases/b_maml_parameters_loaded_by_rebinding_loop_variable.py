"""MAML without the functional interface ("another way to implement MAML"): the meta-parameters
are kept in a copied list and, before each task, "loaded" into the ResNet-like model with
`for meta_param, model_param in zip(param_copy, model.parameters()): model_param = meta_param`
("shallow copy here"). The assignment only rebinds the loop variable; the model keeps running on
its own parameters, so `torch.autograd.grad(loss, param_copy)` raises "One of the differentiated
Tensors appears to not have been used in the graph". Running the model on the copied parameters
(torch.func.functional_call) gives the intended inner update.
Source: https://discuss.pytorch.org/t/another-way-to-implement-maml-model-agnostic-meta-learning/164439
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self, n_in=8, hidden=16, n_out=3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.fc2 = nn.Linear(hidden, n_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def sample_task():
    w = torch.randn(8, 3)
    x_spt, x_qry = torch.randn(10, 8), torch.randn(10, 8)
    return x_spt, (x_spt @ w).argmax(1), x_qry, (x_qry @ w).argmax(1)


tasks = [sample_task() for _ in range(4)]
model = SmallNet()
param_copy = [p.detach().clone().requires_grad_(True) for p in model.parameters()]
names = [name for name, _ in model.named_parameters()]
meta_optimizer = torch.optim.Adam(param_copy, lr=1e-2)
update_lr = 0.1
meta_losses = []
for epoch in range(2):
    meta_optimizer.zero_grad()
    meta_loss = 0.0
    for x_spt, y_spt, x_qry, y_qry in tasks:
        # load parameters
        for meta_param, model_param in zip(param_copy, model.parameters()):
            # shallow copy here
            model_param = meta_param
        out = model(x_spt)
        loss = F.cross_entropy(out, y_spt)
        grad = torch.autograd.grad(loss, param_copy, create_graph=True)
        fast_weights = [p - update_lr * g for p, g in zip(param_copy, grad)]
        out_q = torch.func.functional_call(model, dict(zip(names, fast_weights)), (x_qry,))
        meta_loss = meta_loss + F.cross_entropy(out_q, y_qry)
    meta_loss.backward()
    meta_optimizer.step()
    meta_losses.append(meta_loss.detach())
result = {"meta_losses": meta_losses, "params": [p.detach().clone() for p in param_copy]}
