"""Elastic weight consolidation for continual learning: after task A, the Fisher information is
estimated from the gradient of the mean log-likelihood of task A's labels. The repository kept
every batch's log-likelihoods in a list, which held every batch's graph and ran out of memory; the
reporter detached each entry ("after doing detach etc", re-created here as `.detach()` on each
entry and `requires_grad_()` on their mean, the one way a detached mean reaches that error), and
`autograd.grad(log_likelihood, model.parameters())` then raised "One of the differentiated Tensors
appears to not have been used in the graph"; with `allow_unused=True` every gradient was zero. The
maintainer's answer: detach() cannot work, autograd can no longer track the log-likelihoods;
keep them attached (a running mean rather than a list, for the memory).
Source: https://github.com/shivamsaboo17/Overcoming-Catastrophic-forgetting-in-Neural-Networks/issues/2
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class ElasticWeightConsolidation:
    def __init__(self, model, crit, lr=0.01, weight=100.0):
        self.model = model
        self.weight = weight
        self.crit = crit
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr)

    def _update_mean_params(self):
        for param_name, param in self.model.named_parameters():
            buff_param_name = param_name.replace(".", "__")
            self.model.register_buffer(buff_param_name + "_estimated_mean", param.data.clone())

    def _update_fisher_params(self, current_ds, batch_size, num_batch):
        dl = DataLoader(current_ds, batch_size, shuffle=False)
        log_likelihoods = []
        for i, (inputs, target) in enumerate(dl):
            if i > num_batch:
                break
            output = F.log_softmax(self.model(inputs), dim=1)
            log_likelihoods.append(output.gather(1, target[:, None]).squeeze(1).detach())
        log_likelihood = torch.cat(log_likelihoods).mean().requires_grad_()
        grad_log_likelihood = autograd.grad(log_likelihood, self.model.parameters())
        buff_param_names = [name.replace(".", "__") for name, _ in self.model.named_parameters()]
        for buff_param_name, grad in zip(buff_param_names, grad_log_likelihood):
            self.model.register_buffer(buff_param_name + "_estimated_fisher", grad.data.clone() ** 2)

    def register_ewc_params(self, dataset, batch_size, num_batches):
        self._update_fisher_params(dataset, batch_size, num_batches)
        self._update_mean_params()

    def _compute_consolidation_loss(self, weight):
        losses = []
        for param_name, param in self.model.named_parameters():
            buff_param_name = param_name.replace(".", "__")
            estimated_mean = getattr(self.model, buff_param_name + "_estimated_mean")
            estimated_fisher = getattr(self.model, buff_param_name + "_estimated_fisher")
            losses.append((estimated_fisher * (param - estimated_mean) ** 2).sum())
        return (weight / 2) * sum(losses)

    def forward_backward_update(self, inputs, target, consolidate):
        output = self.model(inputs)
        loss = self.crit(output, target)
        if consolidate:
            loss = loss + self._compute_consolidation_loss(self.weight)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
ewc = ElasticWeightConsolidation(model, crit=nn.CrossEntropyLoss(), lr=0.05)

task_a = TensorDataset(torch.randn(64, 10), torch.randint(0, 4, (64,)))
task_b = TensorDataset(torch.randn(64, 10) + 1.0, torch.randint(0, 4, (64,)))

losses = []
for inputs, target in DataLoader(task_a, batch_size=16, shuffle=False):
    losses.append(ewc.forward_backward_update(inputs, target, consolidate=False))
ewc.register_ewc_params(task_a, batch_size=16, num_batches=3)
for inputs, target in DataLoader(task_b, batch_size=16, shuffle=False):
    losses.append(ewc.forward_backward_update(inputs, target, consolidate=True))

result = {"losses": torch.tensor(losses),
          "fisher": [getattr(model, n.replace(".", "__") + "_estimated_fisher").clone()
                     for n, _ in model.named_parameters()],
          "params": [p.detach().clone() for p in model.parameters()]}
