"""PyHessian (amirgholami/PyHessian) in its own use: a small classifier trained a few steps, then the
Hessian's top eigenvalues (power iteration), its trace (Hutchinson) and its spectral density
(stochastic Lanczos) from `loss.backward(create_graph=True)` and `autograd.grad` Hessian-vector
products, on one batch and over a data loader, then a loss landscape along the top eigenvector
(parameters moved through `.data`, as its README's example) and more training. For
docs/real-code.md (fourteenth set): seeded, prints losses, eigenvalues and checksums, to be
compared line by line between plain python and the doctor's modes. Run from the project's root
(`pyhessian` importable)."""
import copy

import torch
import torch.nn as nn
from pyhessian import hessian


def make_model():
    return nn.Sequential(nn.Linear(10, 24), nn.BatchNorm1d(24), nn.ReLU(), nn.Linear(24, 16), nn.Tanh(), nn.Linear(16, 3))


def checksum(model):
    return sum(float(p.detach().double().abs().sum()) for p in model.parameters())


def fmt(values):
    return " ".join(f"{float(v):.8g}" for v in values)


def main():
    torch.manual_seed(0)
    x = torch.randn(96, 10)
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).long() + (x[:, 3] > 1).long()
    batches = [(x[i:i + 32], y[i:i + 32]) for i in range(0, 96, 32)]
    model = make_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(6):
        for inputs, targets in batches:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
        print(f"train epoch {step} loss {loss.item():.8f}")
    print(f"checksum after training {checksum(model):.10f}")

    # one batch: the gradients with their graph are taken once and reused for every product
    torch.manual_seed(1)
    comp = hessian(model, criterion, data=(x, y), cuda=False)
    eigenvalues, eigenvectors = comp.eigenvalues(maxIter=40, tol=1e-4, top_n=2)
    print("top eigenvalues", fmt(eigenvalues))
    trace = comp.trace(maxIter=40, tol=1e-4)
    print(f"trace estimate {sum(trace) / len(trace):.8g} over {len(trace)} draws")
    density_eigen, density_weight = comp.density(iter=8, n_v=2)
    for k, (e, w) in enumerate(zip(density_eigen, density_weight)):
        print(f"density run {k}: nodes", fmt(sorted(e)), "weights sum", f"{sum(w):.6g}")

    # a data loader: each product runs forward and backward(create_graph=True) per batch
    torch.manual_seed(2)
    comp_loader = hessian(model, criterion, dataloader=batches, cuda=False)
    top_loader, _ = comp_loader.eigenvalues(maxIter=15, tol=1e-3, top_n=1)
    print("top eigenvalue over the loader", fmt(top_loader))
    trace_loader = comp_loader.trace(maxIter=8, tol=1e-3)
    print(f"trace over the loader {sum(trace_loader) / len(trace_loader):.8g}")

    # loss landscape along the top eigenvector (README's example: a perturbed copy written through .data)
    model_perb = copy.deepcopy(model)
    model_perb.eval()
    top_vector = eigenvectors[0]
    for lam in [-0.5, -0.25, 0.0, 0.25, 0.5]:
        for p_perb, p, d in zip(model_perb.parameters(), model.parameters(), top_vector):
            p_perb.data = p.data + lam * d
        print(f"landscape lambda {lam:+.2f} loss {criterion(model_perb(x), y).item():.8f}")

    # training goes on after the analysis (the .grad left by backward(create_graph=True) is cleared)
    model.train()
    for step in range(4):
        for inputs, targets in batches:
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(inputs), targets) + 1e-3 * sum(p.pow(2).sum() for p in model.parameters())
            loss.backward()
            optimizer.step()
        print(f"more training epoch {step} loss {loss.item():.8f}")
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    print(f"accuracy {accuracy:.6f} checksum {checksum(model):.10f}")
    print(f"final eigenvalue {fmt(hessian(model, criterion, data=(x, y), cuda=False).eigenvalues(maxIter=30, tol=1e-4)[0])}")


if __name__ == "__main__":
    main()
