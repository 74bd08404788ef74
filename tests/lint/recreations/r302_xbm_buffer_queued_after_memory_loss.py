"""Quaterion's cross-batch memory (XBM) keeps the embeddings of recent
batches in a buffer and adds a loss between the current batch and the
buffer.  The trainable model's `training_step` computed that loss with the
buffer's contents, `memory_embeddings, memory_targets = self._xbm_buffer.get()`
(a slice of the buffer tensor), then queued the batch into the same buffer
with slice assignment before returning the loss.  The matmul of the loss had
saved the slice, so the backward pass Lightning runs on the returned loss
fails ("one of the variables needed for gradient computation has been
modified by an inplace operation").  The fix queues after the backward pass
(in `on_train_batch_end`) or computes the loss on a copy.
Buggy line: `self._embeddings[self._pointer : self._pointer + batch_size] =
embeddings` in `XbmBuffer.queue`, called from `training_step`.
Expected finding: ADL001 at the queue call in `training_step`.
Source: https://github.com/qdrant/quaterion/issues/181"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class XbmBuffer:
    def __init__(self, buffer_size, embedding_size):
        self._buffer_size = buffer_size
        self._embeddings = torch.zeros(buffer_size, embedding_size)
        self._targets = torch.zeros(buffer_size, dtype=torch.long)
        self._pointer = 0
        self._is_full = False

    def get(self):
        if self._is_full:
            return self._embeddings, self._targets
        return self._embeddings[: self._pointer], self._targets[: self._pointer]

    def queue(self, embeddings, targets):
        batch_size = len(targets)
        if self._pointer + batch_size > self._buffer_size:
            self._embeddings[-batch_size:] = embeddings
            self._targets[-batch_size:] = targets
            self._pointer = 0
            self._is_full = True
        else:
            self._embeddings[self._pointer : self._pointer + batch_size] = embeddings
            self._targets[self._pointer : self._pointer + batch_size] = targets
            self._pointer += batch_size


def contrastive_xbm_loss(embeddings, targets, memory_embeddings, memory_targets, margin=0.5):
    distances = 1 - embeddings @ memory_embeddings.t()
    same = (targets[:, None] == memory_targets[None, :]).float()
    return (same * distances + (1 - same) * F.relu(margin - distances)).mean()


class SimilarityModel(nn.Module):
    def __init__(self, buffer_size=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
        self._xbm_buffer = XbmBuffer(buffer_size, 4)

    def training_step(self, batch, batch_idx):
        features, targets = batch
        embeddings = F.normalize(self.encoder(features), dim=-1)
        loss = (1 - (embeddings[:-1] * embeddings[1:]).sum(-1)).mean()
        if batch_idx > 0:
            memory_embeddings, memory_targets = self._xbm_buffer.get()
            loss = loss + contrastive_xbm_loss(embeddings, targets, memory_embeddings, memory_targets)
        self._xbm_buffer.queue(embeddings.detach(), targets)  # missed: ADL001
        return loss


def run():
    torch.manual_seed(0)
    model = SimilarityModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for batch_idx in range(3):
        batch = (torch.randn(4, 6), torch.randint(0, 2, (4,)))
        loss = model.training_step(batch, batch_idx)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
