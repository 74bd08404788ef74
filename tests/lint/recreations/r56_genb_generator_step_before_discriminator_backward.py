"""GenB (bias-model training for VQA): the generator's loss is backpropagated
and `optim_G.step()` runs, then the discriminator's loss on the generator's
prediction (not detached) is backpropagated through the stepped generator
("modified by an inplace operation" at the second backward, PyTorch 1.7).
Source: https://github.com/chojw/genb/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseModel(nn.Module):
    def __init__(self, v_dim=6, q_dim=5, num_ans=4, gen=False):
        super().__init__()
        self.v_proj = nn.Linear(v_dim, 8)
        self.q_proj = nn.Linear(q_dim, 8)
        self.classifier = nn.Linear(8, num_ans)
        self.noise = nn.Linear(3, 8) if gen else None

    def forward(self, v, q, gen=False):
        joint = torch.relu(self.v_proj(v)) * torch.relu(self.q_proj(q))
        if gen:
            joint = joint + self.noise(torch.randn(v.size(0), 3))
        return self.classifier(joint)


class Discriminator(nn.Module):
    def __init__(self, num_ans=4):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(num_ans, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.fc(x)


def train(model, genb, discriminator, loader, optim, optim_G, optim_D, kld=1.0):
    for v, q, a in loader:
        optim.zero_grad()
        pred = model(v, q)

        optim_G.zero_grad()
        optim_D.zero_grad()
        pred_g = genb(v, q, gen=True)
        g_loss = F.binary_cross_entropy_with_logits(pred_g, a)
        vae_preds = discriminator(pred_g)
        main_preds = discriminator(pred)
        g_distill = kld * F.kl_div(F.log_softmax(pred_g, 1), F.softmax(pred.detach(), 1), reduction="batchmean")
        dsc_loss = F.binary_cross_entropy_with_logits(vae_preds, torch.ones_like(vae_preds))
        g_loss = g_loss + dsc_loss + g_distill
        g_loss.backward(retain_graph=True)
        optim_G.step()  # expect: ADL003

        dsc_loss = F.binary_cross_entropy_with_logits(vae_preds, torch.zeros_like(vae_preds)) + \
            F.binary_cross_entropy_with_logits(main_preds, torch.ones_like(main_preds))
        dsc_loss.backward(retain_graph=True)
        optim_D.step()

        loss = F.binary_cross_entropy_with_logits(pred, a)
        loss.backward()
        optim.step()


def run():
    torch.manual_seed(0)
    model, genb, discriminator = BaseModel(), BaseModel(gen=True), Discriminator()
    optim = torch.optim.Adamax(model.parameters(), lr=1e-3)
    optim_G = torch.optim.Adamax(genb.parameters(), lr=1e-3)
    optim_D = torch.optim.Adamax(discriminator.parameters(), lr=1e-3)
    loader = [(torch.randn(4, 6), torch.randn(4, 5), torch.rand(4, 4))]
    train(model, genb, discriminator, loader, optim, optim_G, optim_D)
