"""Fine-tuning only the vision tower of a Qwen-VL-style model (the language model and `lm_head` are
frozen with `requires_grad_(False)`). `QWenModel.forward` puts the image features into the token
embeddings at the image positions; to get past an in-place error the user wrote them through
`.data`, `hidden_states.data[i][a + 1 : b] = images.data[idx]`. Writing through `.data` is invisible
to autograd, so the loss no longer depends on the vision tower at all: with everything else frozen,
`loss.backward()` raises "element 0 of tensors does not require grad and does not have a grad_fn".
Source: https://github.com/QwenLM/Qwen-VL/issues/124 ("冻结lm_head出现问题" (freezing lm_head): the
reporter found the cause in the `.data` workaround, "这可能导致vit是trianable的时候完全没有梯度" (this
may leave the trainable ViT with no gradient at all), and fixed it with the maintainers' `.clone()`
suggestion).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID, SEQ, BATCH, N_IMG_TOKENS, PATCH_DIM = 40, 16, 10, 2, 4, 12
IMG_START, IMG_END = 1, 6   # the image occupies positions IMG_START + 1 .. IMG_END - 1


class VisionTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(PATCH_DIM, HID)
        self.attn_pool = nn.Linear(HID, HID)

    def forward(self, patches):
        return self.attn_pool(torch.tanh(self.proj(patches)))


class QWenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HID)
        self.drop = nn.Dropout(0.0)
        self.h = nn.TransformerEncoderLayer(HID, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.visual = VisionTower()

    def forward(self, input_ids, patches):
        images = self.visual(patches)
        img_pos = [(i, IMG_START, IMG_END) for i in range(input_ids.size(0))]
        hidden_states = self.wte(input_ids)
        hidden_states = self.drop(hidden_states)
        for idx, (i, a, b) in enumerate(img_pos):
            hidden_states.data[i][a + 1 : b] = images.data[idx]
        return self.h(hidden_states)


class QWenLMHeadModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = QWenModel()
        self.lm_head = nn.Linear(HID, VOCAB, bias=False)

    def forward(self, input_ids, patches, labels):
        logits = self.lm_head(self.transformer(input_ids, patches))
        return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1))


model = QWenLMHeadModel()
model.requires_grad_(False)
model.transformer.visual.requires_grad_(True)   # fix_vit=False: train the vision tower only
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)

input_ids = torch.randint(0, VOCAB, (BATCH, SEQ))
patches = torch.randn(BATCH, N_IMG_TOKENS, PATCH_DIM)

losses = []
for step in range(3):
    loss = model(input_ids, patches, input_ids)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.transformer.visual.parameters()]}
