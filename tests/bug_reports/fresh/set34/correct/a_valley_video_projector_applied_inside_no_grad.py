"""Valley (a video LLaMA assistant), valley/model/valley.py: `ValleyLlamaModel.forward` runs the
frozen CLIP vision tower over the video frames under `with torch.no_grad():`, and the
`self.mm_projector(image_features)` call sits inside the same block. Patch features (mean over
frames) and per-frame features from the projector are spliced into the token embeddings with
`torch.cat` and the language model is trained on the answer tokens. Nothing raises: the LLM still
learns, but the projector, which the training stage lists as trainable, gets no gradient ("the
projector layer is not trained at all ... the gradient is blocked within torch.no_grad"). The
correct version keeps only the frozen vision tower under `no_grad` and applies the projector
outside it, as LLaVA (which Valley's forward is adapted from) does.
Source: https://github.com/RupertLuo/Valley/issues/13
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, D_VISION, D_MODEL, N_PATCH, N_FRAME = 40, 12, 16, 4, 3
IM_PATCH, IM_START, IM_END, VI_FRAME, VI_START, VI_END = 34, 35, 36, 37, 38, 39


class VisionTower(nn.Module):
    """Stands in for CLIP ViT-L/14: returns hidden states (CLS first) for each frame."""

    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Linear(3 * 4 * 4, D_VISION)
        self.cls = nn.Parameter(torch.randn(1, 1, D_VISION))
        self.block = nn.Sequential(nn.LayerNorm(D_VISION), nn.Linear(D_VISION, D_VISION), nn.GELU())

    def forward(self, frames, output_hidden_states=True):
        patches = frames.unfold(2, 4, 4).unfold(3, 4, 4).permute(0, 2, 3, 1, 4, 5).reshape(frames.shape[0], N_PATCH, -1)
        h0 = torch.cat([self.cls.expand(frames.shape[0], -1, -1), self.patch_embed(patches)], dim=1)
        h1 = h0 + self.block(h0)
        return {"hidden_states": (h0, h1)}


class ValleyLlamaModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, D_MODEL)
        self.vision_tower = VisionTower()
        self.mm_projector = nn.Linear(D_VISION, D_MODEL)
        self.layer = nn.TransformerEncoderLayer(D_MODEL, 2, 32, dropout=0.0, batch_first=True)
        self.mm_vision_select_layer = -1

    def forward(self, input_ids, images):
        inputs_embeds = self.embed_tokens(input_ids)
        with torch.no_grad():
            image_features = []
            for batch_id in range(len(images)):
                image_forward_outs = self.vision_tower(images[batch_id], output_hidden_states=True)
                select_hidden_state = image_forward_outs["hidden_states"][self.mm_vision_select_layer]
                image_features.append(select_hidden_state[:, :])
            image_features = torch.stack(image_features)
        image_features = self.mm_projector(image_features)

        new_input_embeds = []
        for cur_input_ids, cur_input_embeds, cur_image_features in zip(input_ids, inputs_embeds, image_features):
            mean_image_features = torch.mean(cur_image_features[:, 1:, :], dim=0)
            frame_image_features = cur_image_features[:, 0, :]
            pos = int(torch.where(cur_input_ids == IM_START)[0][0])
            cur_new_input_embeds = torch.cat((cur_input_embeds[:pos + 1], mean_image_features, cur_input_embeds[pos + N_PATCH + 1:]), dim=0)
            vpos = int(torch.where(cur_input_ids == VI_START)[0][0])
            cur_video_input_embeds = torch.cat((cur_new_input_embeds[:vpos + 1], frame_image_features, cur_new_input_embeds[vpos + N_FRAME + 1:]), dim=0)
            new_input_embeds.append(cur_video_input_embeds)
        inputs_embeds = torch.stack(new_input_embeds, dim=0)
        causal = torch.triu(torch.full((inputs_embeds.shape[1],) * 2, float("-inf")), diagonal=1)
        return self.layer(inputs_embeds, src_mask=causal)


class ValleyLlamaForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = ValleyLlamaModel()
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, input_ids, images, labels):
        hidden_states = self.model(input_ids, images)
        logits = self.lm_head(hidden_states)
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        return F.cross_entropy(shift_logits.view(-1, VOCAB), shift_labels.view(-1), ignore_index=-100)


def make_sample():
    prompt = torch.randint(1, 30, (3,))
    answer = torch.randint(1, 30, (4,))
    ids = torch.cat([prompt, torch.tensor([IM_START] + [IM_PATCH] * N_PATCH + [IM_END, VI_START] + [VI_FRAME] * N_FRAME + [VI_END]), answer])
    labels = torch.full_like(ids, -100)
    labels[-answer.numel():] = answer
    return ids, labels


model = ValleyLlamaForCausalLM()
model.model.vision_tower.requires_grad_(False)  # frozen CLIP; LLM and projector are tuned
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(trainable, lr=1e-3)
losses = []
for step in range(3):
    batch = [make_sample() for _ in range(2)]
    input_ids = torch.stack([b[0] for b in batch])
    labels = torch.stack([b[1] for b in batch])
    images = torch.randn(2, N_FRAME, 3, 8, 8)
    loss = model(input_ids, images, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "projector": [p.detach().clone() for p in model.model.mm_projector.parameters()],
          "lm_head": model.lm_head.weight.detach().clone()}
