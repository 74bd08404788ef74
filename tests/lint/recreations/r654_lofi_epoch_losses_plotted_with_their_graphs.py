"""Lofi's VAE training (`model/train.py`) collects each batch's chord, melody
and KL losses as tensors (`ep_train_losses_chords.append(loss_chords)`),
averages them with `sum(...) / len(...)` at the end of the epoch, appends the
averages to the curves and plots the curves.  The averages still require
grad (they are sums of the batch losses with their graphs), so matplotlib's
conversion raises "Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead." after the first epoch.  Re-created as the
training function with its nested `compute_loss`, training and validation
loops, the epoch averages and a plotting helper that converts the curves
with NumPy as matplotlib does.
Buggy line: `ep_train_losses_chords.append(loss_chords)` (the batch loss kept
with its graph, later converted).
Source: https://github.com/jacbz/Lofi/issues/14"""
import numpy as np
import torch
import torch.nn as nn


class ChordVAE(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.Linear(hidden, 2 * hidden)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, chords):
        mu, logvar = self.encoder(self.embed(chords)).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        return self.decoder(z), kl


def plot_curves(epochs, curves):
    for name, values in curves.items():
        ys = np.asarray(values, dtype=float)
        assert len(ys) == len(epochs), name


def train(train_batches, val_batches, model, n_epochs=2):
    ce_loss = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    epochs = []
    train_losses_chords, train_losses_kl, val_losses_chords = [], [], []

    def compute_loss(chords):
        pred_chords, kl = model(chords)
        loss_chords = ce_loss(pred_chords.permute(0, 2, 1), chords)
        loss_total = loss_chords + kl
        return loss_total, loss_chords, kl

    for epoch in range(n_epochs):
        epochs.append(epoch)
        ep_train_losses_chords, ep_train_losses_kl, ep_val_losses_chords = [], [], []
        model.train()
        for chords in train_batches:
            loss, loss_chords, kl_loss = compute_loss(chords)
            ep_train_losses_chords.append(loss_chords)  # expect: ADL028
            ep_train_losses_kl.append(kl_loss)  # expect: ADL028
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss = loss.item()
        model.eval()
        for chords in val_batches:
            with torch.no_grad():
                loss, loss_chords, kl_loss = compute_loss(chords)
                ep_val_losses_chords.append(loss_chords)
        train_losses_chords.append(sum(ep_train_losses_chords) / len(ep_train_losses_chords))  # expect: ADL028
        train_losses_kl.append(sum(ep_train_losses_kl) / len(ep_train_losses_kl))  # expect: ADL028
        val_losses_chords.append(sum(ep_val_losses_chords) / len(ep_val_losses_chords))
        plot_curves(epochs, {"train chords": train_losses_chords, "train kl": train_losses_kl,
                             "val chords": val_losses_chords})


def run():
    torch.manual_seed(0)
    batches = [torch.randint(0, 12, (4, 8)) for _ in range(2)]
    train(batches, batches[:1], ChordVAE())
