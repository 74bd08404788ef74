"""CoCa with its ViT image encoder wrapped in `Extractor(vit, return_embeddings_only=True, detach=False)`:
the hook keeps the transformer output itself, so the contrastive and captioning losses train the ViT.
Source: https://github.com/lucidrains/CoCa-pytorch/issues/6 (vit-pytorch 0.35.8, `detach = False`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM, PATCH, IMAGE, VOCAB, SEQ, BATCH = 16, 4, 8, 20, 6, 4


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_patch_embedding = nn.Linear(3 * PATCH * PATCH, DIM)
        self.pos_embedding = nn.Parameter(torch.randn(1, (IMAGE // PATCH) ** 2, DIM) * 0.02)
        self.transformer = nn.TransformerEncoderLayer(DIM, 2, 32, dropout=0.0, batch_first=True)
        self.mlp_head = nn.Linear(DIM, 10)

    def forward(self, img):
        b = img.shape[0]
        patches = img.unfold(2, PATCH, PATCH).unfold(3, PATCH, PATCH)
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, 3 * PATCH * PATCH)
        x = self.transformer(self.to_patch_embedding(patches) + self.pos_embedding)
        return self.mlp_head(x.mean(dim=1))


class Extractor(nn.Module):
    def __init__(self, vit, layer_name="transformer", return_embeddings_only=False, detach=True):
        super().__init__()
        self.vit = vit
        self.latents = None
        self.return_embeddings_only = return_embeddings_only
        self.detach = detach
        getattr(vit, layer_name).register_forward_hook(self._hook)

    def _hook(self, _, inputs, output):
        self.latents = output.clone().detach() if self.detach else output

    def forward(self, img):
        pred = self.vit(img)
        latents, self.latents = self.latents, None
        if self.return_embeddings_only:
            return latents
        return pred, latents


class CoCa(nn.Module):
    def __init__(self, img_encoder):
        super().__init__()
        self.img_encoder = img_encoder
        self.token_emb = nn.Embedding(VOCAB, DIM)
        self.text_cls_token = nn.Parameter(torch.randn(DIM) * 0.02)
        self.unimodal = nn.TransformerEncoderLayer(DIM, 2, 32, dropout=0.0, batch_first=True)
        self.img_queries = nn.Parameter(torch.randn(1, DIM) * 0.02)
        self.img_attn_pool = nn.MultiheadAttention(DIM, 2, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(DIM, 2, batch_first=True)
        self.to_logits = nn.Linear(DIM, VOCAB)
        self.temperature = nn.Parameter(torch.tensor(1.0))

    def forward(self, text, images):
        b = text.shape[0]
        text_in, labels = text[:, :-1], text[:, 1:]
        tokens = torch.cat([self.token_emb(text_in), self.text_cls_token.expand(b, 1, DIM)], dim=1)
        causal = torch.triu(torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool), 1)
        tokens = self.unimodal(tokens, src_mask=causal)
        text_tokens, text_embeds = tokens[:, :-1], tokens[:, -1]

        image_tokens = self.img_encoder(images)
        image_embeds, _ = self.img_attn_pool(self.img_queries.expand(b, -1, -1), image_tokens, image_tokens)
        image_embeds = image_embeds[:, 0]

        multimodal, _ = self.cross_attn(text_tokens, image_tokens, image_tokens)
        logits = self.to_logits(text_tokens + multimodal)
        caption_loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))

        sim = F.normalize(text_embeds, dim=-1) @ F.normalize(image_embeds, dim=-1).t()
        sim = sim * self.temperature.exp()
        targets = torch.arange(b)
        contrastive_loss = (F.cross_entropy(sim, targets) + F.cross_entropy(sim.t(), targets)) / 2
        return caption_loss + contrastive_loss


vit = ViT()
image_encoder = Extractor(vit, return_embeddings_only=True, detach=False)
coca = CoCa(image_encoder)
optimizer = torch.optim.Adam(coca.parameters(), lr=1e-2)

text = torch.randint(0, VOCAB, (BATCH, SEQ + 1))
images = torch.randn(BATCH, 3, IMAGE, IMAGE)
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = coca(text, images)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {
    "losses": torch.stack(losses),
    "image_encoder": [p.detach().clone() for p in vit.transformer.parameters()],
    "text_side": [p.detach().clone() for p in coca.unimodal.parameters()],
}
