"""Vision-language instruction tuning (mlpc-ucsd/BLIVA, a BLIP-2/InstructBLIP model): the image
encoder is loaded in half precision because it is normally frozen (the LAVIS loader converts the
ViT to fp16 when `vit_precision` is "fp16"). The user unfroze the ViT to train it with the rest and
kept the mixed-precision loop with a GradScaler; the ViT's gradients are then fp16 and
`scaler.step` stops with "ValueError: Attempting to unscale FP16 gradients."
Source: https://github.com/mlpc-ucsd/BLIVA/issues/29 ("Why does ValueError: Attempting to unscale
FP16 gradients appear when I unfreeze the ViT"; a module that is trained has to be kept in fp32
master weights, only frozen modules may be cast to half).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PATCH, VIT_DIM, QUERY_DIM, VOCAB, PATCHES = 12, 16, 16, 10, 4


class VisionTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Linear(PATCH, VIT_DIM)
        self.block = nn.Sequential(nn.LayerNorm(VIT_DIM), nn.Linear(VIT_DIM, VIT_DIM), nn.GELU())

    def forward(self, patches):
        x = self.patch_embed(patches)
        return x + self.block(x)


class InstructModel(nn.Module):
    def __init__(self, vit_precision="fp16"):
        super().__init__()
        self.visual_encoder = VisionTower()
        if vit_precision == "fp16":
            self.visual_encoder.half()
        self.ln_vision = nn.LayerNorm(VIT_DIM)
        self.query_proj = nn.Linear(VIT_DIM, QUERY_DIM)
        self.lm_head = nn.Linear(QUERY_DIM, VOCAB)

    def forward(self, patches):
        vit_dtype = next(self.visual_encoder.parameters()).dtype
        image_embeds = self.ln_vision(self.visual_encoder(patches.to(vit_dtype)).float())
        return self.lm_head(self.query_proj(image_embeds).mean(dim=1))


model = InstructModel(vit_precision="fp32")  # a trained ViT keeps fp32 weights
model.visual_encoder.requires_grad_(True)  # "unfreeze the ViT"
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")

patches = torch.randn(3, PATCHES, PATCH)
answers = torch.randint(0, VOCAB, (3,))

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(patches), answers)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().float().clone() for p in model.parameters()]}
