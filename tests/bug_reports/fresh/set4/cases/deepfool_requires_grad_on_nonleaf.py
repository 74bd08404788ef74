"""DeepFool attack: each iteration sets `requires_grad` on the current adversarial image, but the
update `adv = (adv + step).clamp(0, 1)` makes it the result of an operation (not a leaf) for the
next iteration.
Source: https://github.com/Harry24k/adversarial-attacks-pytorch/issues/2 ("you can only change
requires_grad flags of leaf variables" in deepfool; fixed by adding `.detach()` to the update).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 4)).eval()
image = torch.rand(1, 3, 2, 2)
label = model(image).argmax(1).item()


def deepfool(model, image, label, steps=3, overshoot=0.02):
    adv = image.clone()
    for _ in range(steps):
        adv.requires_grad = True
        logits = model(adv)[0]
        if logits.argmax().item() != label:
            break
        grad_label = torch.autograd.grad(logits[label], adv, retain_graph=True)[0]
        best_ratio, best_step = None, None
        for k in range(logits.numel()):
            if k == label:
                continue
            w_k = torch.autograd.grad(logits[k], adv, retain_graph=True)[0] - grad_label
            f_k = (logits[k] - logits[label]).detach()
            ratio = f_k.abs() / (w_k.norm() + 1e-8)
            if best_ratio is None or ratio < best_ratio:
                best_ratio, best_step = ratio, (ratio + 1e-4) * w_k / (w_k.norm() + 1e-8)
        adv = (adv + (1 + overshoot) * best_step).clamp(0, 1)
    return adv.detach()


adversarial = deepfool(model, image, label)
result = {"adversarial": adversarial, "logits": model(adversarial).detach()}
