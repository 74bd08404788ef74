"""A Meta-Transfer Objective for Learning to Disentangle Causal Mechanisms (the paper's code,
notebooks/bivariate-categorical/03_meta_learning.ipynb), issue 1: the meta-learning cell fails
with "one of the variables needed for gradient computation has been modified by an inplace
operation: [torch.DoubleTensor [10]] is at version 2; expected version 1". The reporter: "in step
5, the variables that are used to compute `loss` have been updated by `optimizer.step()` in step
4, hence the `loss` in step 5 has been obsolete". The two causal models (A -> B and B -> A, each a
categorical marginal of N=10 logits and a conditional) are adapted on transfer data by their
optimizer; the meta loss over the structural parameter was built from their log-likelihoods
before that step and is backpropagated after it.
Re-created with the categorical modules, the structural model and the transfer episode loop.
Buggy line: `model_optimizer.step()` (step 4, before the meta loss's backward in step 5).
Source: https://github.com/authors-1901-10912/A-Meta-Transfer-Objective-For-Learning-To-Disentangle-Causal-Mechanisms/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N = 10


class Marginal(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n, dtype=torch.float64))

    def forward(self, a):
        return self.w[a] - torch.logsumexp(self.w, dim=0)


class Conditional(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n, n, dtype=torch.float64))

    def forward(self, b, a):
        logits = self.w[a]
        return logits.gather(1, b.unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=1)


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.p_A = Marginal(n)
        self.p_B_A = Conditional(n)

    def forward(self, a, b):
        return self.p_A(a) + self.p_B_A(b, a)


class StructuralModel(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.model_A_B = Model(n)
        self.model_B_A = Model(n)
        self.w = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))

    def modules_parameters(self):
        return list(self.model_A_B.parameters()) + list(self.model_B_A.parameters())

    def forward(self, a, b):
        return self.model_A_B(a, b), self.model_B_A(b, a)

    def online_loglikelihood(self, logl_A_B, logl_B_A):
        n = logl_A_B.size(0)
        return logl_A_B.sum() / n, logl_B_A.sum() / n


def sample(n, batch):
    a = torch.randint(0, n, (batch,))
    return a, (a + torch.randint(0, 2, (batch,))) % n


def meta_train(num_episodes=2, num_transfer=3, batch=16):
    torch.manual_seed(0)
    model = StructuralModel(N)
    meta_optimizer = torch.optim.RMSprop([model.w], lr=1e-2)
    model_optimizer = torch.optim.SGD(model.modules_parameters(), lr=1e-1)
    for _ in range(num_episodes):
        for _ in range(num_transfer):
            a, b = sample(N, batch)
            # step 3: the log-likelihoods and the meta loss of this batch
            logl_A_B, logl_B_A = model(a, b)
            online_A_B, online_B_A = model.online_loglikelihood(logl_A_B, logl_B_A)
            meta_loss = -torch.logaddexp(F.logsigmoid(model.w) + online_A_B, F.logsigmoid(-model.w) + online_B_A)
            # step 4: adapt the two causal models
            loss = -(online_A_B + online_B_A)
            model_optimizer.zero_grad()
            loss.backward(retain_graph=True)
            model_optimizer.step()  # expect: ADL003 (updates the models' logits in place before meta_loss.backward() goes through them)
            # step 5: the structural parameter's update
            meta_optimizer.zero_grad()
            meta_loss.backward()
            meta_optimizer.step()


run = meta_train


if __name__ == "__main__":
    meta_train()
