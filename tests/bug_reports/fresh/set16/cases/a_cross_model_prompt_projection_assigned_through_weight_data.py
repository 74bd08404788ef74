"""Cross-model prompt transfer (thunlp/Prompt-Transferability, crossPromptT5.py): a projector network
maps a soft prompt trained for one model into the embedding space of another, and the projected
prompt was installed with `prompt_embeddings.weight.data = target_prompt`. Writing through `.data`
keeps the values but drops the projector from the graph: the target model's prompt embedding (a
leaf of its own) receives the gradient, the projector, which is what the optimizer trains,
receives none and never changes. Nothing is raised.
Source: https://github.com/thunlp/Prompt-Transferability/issues/2 ("Assigning weights in this way
will result in grad_fn lost. Hence gradient cannot be backpropagated."; the maintainer: "these bugs
are already fixed"; fixed by feeding the projected prompt itself to the model).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SOURCE_DIM, TARGET_DIM, PROMPT_LEN, VOCAB, SEQ, BATCH, CLASSES = 6, 8, 3, 20, 5, 4, 2


class PromptedEncoder(nn.Module):
    """A frozen target model that reads `PROMPT_LEN` prompt vectors before the tokens."""

    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, TARGET_DIM)
        self.prompt_embeddings = nn.Embedding(PROMPT_LEN, TARGET_DIM)
        self.encoder = nn.Linear(TARGET_DIM, TARGET_DIM)
        self.classifier = nn.Linear(TARGET_DIM, CLASSES)
        for module in (self.word_embeddings, self.encoder, self.classifier):
            module.requires_grad_(False)

    def forward(self, input_ids):
        prompt = self.prompt_embeddings.weight.unsqueeze(0).expand(input_ids.shape[0], -1, -1)
        hidden = torch.tanh(self.encoder(torch.cat([prompt, self.word_embeddings(input_ids)], dim=1)))
        return self.classifier(hidden.mean(dim=1))


target_model = PromptedEncoder()
projector = nn.Sequential(nn.Linear(SOURCE_DIM, 16), nn.Tanh(), nn.Linear(16, TARGET_DIM))
source_prompt = torch.randn(PROMPT_LEN, SOURCE_DIM)
optimizer = torch.optim.AdamW(projector.parameters(), lr=1e-2)
input_ids = torch.randint(0, VOCAB, (BATCH, SEQ))
labels = torch.randint(0, CLASSES, (BATCH,))

losses = []
for step in range(4):
    optimizer.zero_grad()
    target_prompt = projector(source_prompt)
    target_model.prompt_embeddings.weight.data = target_prompt
    logits = target_model(input_ids)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "projector": [p.detach().clone() for p in projector.parameters()]}
