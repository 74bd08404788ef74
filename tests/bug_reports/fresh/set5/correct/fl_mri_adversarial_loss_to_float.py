"""Federated MRI reconstruction with cross-site adaptation: each client's local update adds an
adversarial domain loss to the reconstruction loss, but a fix for a memory leak turned the
adversarial term into a Python float before it is added (`loss_adv_g = loss_adv_g.detach().item()`),
so it contributes nothing to the gradients (no error).
Source: https://github.com/guopengf/FL-MRCM/issues/10 ("loss_adv_g will not take effect to the back
propagation because it is detached and re-assigned to a float scalar"; maintainer: "detach() should
take place in the next line (in the append())").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
global_recon = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 10))
domain_clf = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 1))
clients = [(torch.randn(8, 10), torch.randn(8, 10)) for _ in range(2)]
target_site = torch.randn(8, 10)


def local_update(weights, data, steps=3):
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 10))
    model.load_state_dict(weights)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    undersampled, full = data
    adv_losses = []
    for _ in range(steps):
        recon = model(undersampled)
        loss_rec = F.l1_loss(recon, full)
        domain_pred = domain_clf(model(target_site))
        loss_adv_g = F.binary_cross_entropy_with_logits(domain_pred, torch.zeros_like(domain_pred))
        loss = loss_rec + 0.5 * loss_adv_g
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        adv_losses.append(loss_adv_g.detach().item())
    return model.state_dict(), adv_losses


all_adv = []
for round_ in range(2):
    states = []
    for data in clients:
        state, adv = local_update(global_recon.state_dict(), data)
        states.append(state)
        all_adv += adv
    global_recon.load_state_dict({k: sum(s[k] for s in states) / len(states) for k in states[0]})
result = {"adv": torch.tensor(all_adv), "params": [p.detach() for p in global_recon.parameters()]}
