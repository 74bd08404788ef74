"""Batching of variable-length sequences (library module of a set 22 variant)."""
import torch
from torch.nn.utils.rnn import pad_sequence


@torch.no_grad()  # PRIMARY
def collate(sequences):
    batch = pad_sequence(sequences, batch_first=True)
    lengths = torch.tensor([len(s) for s in sequences])
    mask = (torch.arange(batch.shape[1])[None, :] < lengths[:, None]).float()
    return batch, mask
