"""Training a recurrent-memory transformer language model with the SophiaH optimizer
(kozistr/pytorch_optimizer): SophiaH estimates the Hessian diagonal with Hutchinson's method inside
`step()`, `torch.autograd.grad(grads, params, grad_outputs=zs)`, which differentiates the
gradients a second time. The training script swapped the optimizer in and kept a plain
`loss.backward()`, so the gradients carry no graph and the step raises "element 0 of tensors does
not require grad and does not have a grad_fn". The optimizer is re-created here in a few lines
(the Hessian estimate every step, no weight decay).
Source: https://github.com/kozistr/pytorch_optimizer/issues/193 (answer: "maybe `create_graph`
needs to be set to `True` when backward the loss. like this -> `loss.backward(create_graph=True)`").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, BATCH = 16, 8, 6, 2


class SophiaH(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, betas=(0.96, 0.99), p=0.01, eps=1e-12):
        super().__init__(params, dict(lr=lr, betas=betas, p=p, eps=eps))
        self.generator = torch.Generator().manual_seed(1)

    @torch.no_grad()
    def compute_hutchinson_hessian(self):
        params = [p for group in self.param_groups for p in group["params"] if p.grad is not None]
        grads = [p.grad for p in params]
        zs = [torch.randint(0, 2, p.shape, generator=self.generator).float() * 2 - 1 for p in params]
        h_zs = torch.autograd.grad(grads, params, grad_outputs=zs)
        for p, z, h_z in zip(params, zs, h_zs):
            self.state[p]["hessian"] = (z * h_z).abs()

    @torch.no_grad()
    def step(self):
        self.compute_hutchinson_hessian()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum" not in state:
                    state["momentum"] = torch.zeros_like(p)
                    state["hessian_moment"] = torch.zeros_like(p)
                state["momentum"].mul_(beta1).add_(p.grad, alpha=1 - beta1)
                state["hessian_moment"].mul_(beta2).add_(state["hessian"], alpha=1 - beta2)
                ratio = (state["momentum"].abs() / (group["p"] * state["hessian_moment"] + group["eps"])).clamp(max=1.0)
                p.add_(state["momentum"].sign() * ratio, alpha=-group["lr"])


class MemoryLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.memory = nn.Parameter(torch.zeros(1, 1, DIM))
        self.mix = nn.Linear(2 * DIM, DIM)
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        hidden = self.embed(tokens)
        memory = self.memory.expand(tokens.shape[0], tokens.shape[1], DIM)
        return self.out(torch.tanh(self.mix(torch.cat([hidden, memory], dim=-1))))


model = MemoryLM()
optimizer = SophiaH(model.parameters(), lr=1e-2, betas=(0.96, 0.99), p=0.01)
data = torch.randint(0, VOCAB, (BATCH, SEQ + 1))

losses = []
for step in range(3):
    optimizer.zero_grad(set_to_none=True)
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
