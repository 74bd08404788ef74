"""Federated client: the model builds its head lazily on the first evaluation, which runs under
`torch.inference_mode()`, so the head's parameters are inference tensors and loading the server's
weights (`load_state_dict`, an in-place copy) fails.
Source: https://github.com/flwrlabs/flower/issues/3084 (fix: evaluate under `torch.no_grad()`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Client(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = None

    def forward(self, x):
        if self.head is None:
            self.head = nn.Linear(4, 2)
        return self.head(self.body(x).relu())


@torch.inference_mode()
def evaluate(model, x):
    return model(x).argmax(1)


model = Client()
evaluate(model, torch.randn(3, 4))
torch.manual_seed(1)
server_weights = {k: torch.randn_like(v) for k, v in model.state_dict().items()}
model.load_state_dict(server_weights)
loss = model(torch.randn(3, 4)).pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in model.parameters()]}
