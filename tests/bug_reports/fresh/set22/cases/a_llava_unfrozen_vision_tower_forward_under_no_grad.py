"""Fine-tuning a LLaVA-style vision-language model with its vision tower unfrozen (haotian-liu/LLaVA,
`llava/model/multimodal_encoder/clip_encoder.py`): the user sets the CLIP vision tower's
parameters to `requires_grad = True` and gives them to the optimizer with the projector, but the
tower's `forward` is decorated with `@torch.no_grad()`, so its features come out without a graph.
No error: the projector and the language head train, the vision tower's `.grad` stays None and its
weights never change. The fix the reporter found: delete the `@torch.no_grad()` decorator of the
tower's `forward`.
Source: https://github.com/haotian-liu/LLaVA/issues/1449
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PATCHES, PATCH_DIM, VISION_DIM, TEXT_DIM, VOCAB = 5, 12, 16, 20, 11


class CLIPVisionTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Linear(PATCH_DIM, VISION_DIM)
        self.block = nn.Sequential(nn.LayerNorm(VISION_DIM), nn.Linear(VISION_DIM, VISION_DIM), nn.GELU())

    @torch.no_grad()
    def forward(self, images):
        x = self.patch_embed(images)
        return x + self.block(x)


class TinyLlava(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision_tower = CLIPVisionTower()
        self.mm_projector = nn.Sequential(nn.Linear(VISION_DIM, TEXT_DIM), nn.GELU(), nn.Linear(TEXT_DIM, TEXT_DIM))
        self.embed_tokens = nn.Embedding(VOCAB, TEXT_DIM)
        self.lm_head = nn.Linear(TEXT_DIM, VOCAB)

    def forward(self, images, input_ids):
        image_tokens = self.mm_projector(self.vision_tower(images))
        text_tokens = self.embed_tokens(input_ids)
        hidden = torch.cat([image_tokens, text_tokens], dim=1)
        return self.lm_head(hidden.mean(dim=1, keepdim=True) + text_tokens)


model = TinyLlava()
for p in model.vision_tower.parameters():
    p.requires_grad = True
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2, weight_decay=0.0)

images = torch.randn(4, PATCHES, PATCH_DIM)
input_ids = torch.randint(0, VOCAB, (4, 6))
labels = torch.randint(0, VOCAB, (4, 6))

losses = []
for step in range(5):
    optimizer.zero_grad()
    logits = model(images, input_ids)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
