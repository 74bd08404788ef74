"""A Q&A page on "backpropagating through a compiled PyTorch module multiple
times": the forward pass is run once, `loss.backward()` and
`optimizer.step()` follow, and a second `loss.backward()` on the same loss
raises "Trying to backward through the graph a second time", because the
first backward freed the graph's saved tensors.  (With
`retain_graph=True` the second backward would instead fail on the weights
that `optimizer.step()` changed in place.)  The answer: run the forward pass
again before the second backward.  The page's module is `torch.compile`d;
the error is the same without compiling, so this re-creation does not
compile.
Buggy line: the second `loss.backward()`.
Source: https://taourl.com/read-2483063.html"""
import torch


def build():
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer


def two_updates(model, optimizer, x):
    y = model(x)
    # First backward pass
    loss = y.sum()
    loss.backward()
    optimizer.step()
    # Second backward pass without retain_graph=True
    loss.backward()  # expect: ADL019
    optimizer.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    model, optimizer = build()
    x = torch.randn(2, 3, requires_grad=True)
    two_updates(model, optimizer, x)
