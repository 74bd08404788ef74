"""Contrastive image-text-shape training under data parallelism (3dlg-hcvc/DuoduoCLIP,
src/model/duoduoclip.py): to contrast against every rank's batch, the features were collected with
`torch.distributed.all_gather` into fresh buffers and the loss was computed on the concatenated
buffers only. `all_gather` is not differentiable: the buffers carry no graph, so the encoders
receive no gradient at all and only the learned temperature trains. The loss is still computed,
and nothing is raised. (One process with the gloo backend stands for the multi-GPU run.)
Source: https://github.com/3dlg-hcvc/DuoduoCLIP/issues/10 ("when I replace dist.nn.all_gather with
dist.all_gather, it shows no gradient, the all_gather operation won't keep track of gradient
calculation"; the fix in use: put each rank's own features, with their graph, back into the
gathered list, as open_clip's `gather_features` does).
expect: silent"""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IMAGE, TEXT, EMBED, BATCH = 10, 7, 6, 5

store_file = tempfile.NamedTemporaryFile(prefix="gloo_store_", delete=False).name
dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=0, world_size=1)

image_encoder = nn.Sequential(nn.Linear(IMAGE, 16), nn.ReLU(), nn.Linear(16, EMBED))
text_encoder = nn.Sequential(nn.Linear(TEXT, 16), nn.ReLU(), nn.Linear(16, EMBED))
logit_scale = nn.Parameter(torch.tensor(2.0))
optimizer = torch.optim.AdamW([*image_encoder.parameters(), *text_encoder.parameters(), logit_scale], lr=1e-2)
images = torch.randn(BATCH, IMAGE)
texts = torch.randn(BATCH, TEXT)


def gather_from_all_ranks(features):
    gathered = [torch.zeros_like(features) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, features)
    gathered[dist.get_rank()] = features
    return torch.cat(gathered, dim=0)


losses = []
for step in range(4):
    optimizer.zero_grad()
    image_feat = F.normalize(image_encoder(images), dim=-1)
    text_feat = F.normalize(text_encoder(texts), dim=-1)
    image_feat = gather_from_all_ranks(image_feat)
    text_feat = gather_from_all_ranks(text_feat)
    logits = logit_scale.exp() * image_feat @ text_feat.t()
    targets = torch.arange(logits.shape[0])
    loss = 0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.t(), targets))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

dist.destroy_process_group()
if os.path.exists(store_file):  # the file store may remove it itself
    os.remove(store_file)

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in [*image_encoder.parameters(), *text_encoder.parameters(), logit_scale]]}
