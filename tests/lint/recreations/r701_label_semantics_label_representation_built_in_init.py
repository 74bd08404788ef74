"""LabelSemantics (few-shot NER with label semantics), issue 5: the label representation is
computed once by the label encoder (a second BERT) in `FewShot_NER.__init__` -- `self.
label_representation = self.build_label_representation(tag2id)`, without `detach()` -- and every
`forward` multiplies the token embeddings with it.  The first `loss.backward()` frees the label
encoder's part of that graph and `optimizer.step()` updates the label encoder in place, so the
second batch's backward runs through the freed (and stale) graph again: the reporters saw
"one of the variables needed for gradient computation has been modified by an inplace
operation ... output 0 of TBackward" (or "Trying to backward through the graph a second
time").  The fix in the thread: detach the representation when it is stored (or rebuild it in
`forward`).
Re-created in my own words: a tiny "BERT" encoder (embedding, linear, tanh pooler) for tokens
and one for the label descriptions, `build_label_representation` looping over the tag set and
stacking the pooled outputs, and the repository's training loop (zero_grad, backward,
clip_grad_norm_, step, scheduler step).  Raises on the second batch.
Buggy line: `self.label_representation = self.build_label_representation(tag2id)` in
`__init__`.
Source: https://github.com/TianWuYuJiangHenShou/LabelSemantics/issues/5"""
import torch
import torch.nn as nn


class TinyBert(nn.Module):
    def __init__(self, vocab=30, hidden=8):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids):
        last_hidden_state = torch.tanh(self.encoder(self.embeddings(input_ids)))
        pooler_output = torch.tanh(self.pooler(last_hidden_state[:, 0]))
        return last_hidden_state, pooler_output


class FewShot_NER(nn.Module):
    def __init__(self, tag2id, label_context):
        super().__init__()
        self.token_encoder = TinyBert()
        self.label_encoder = TinyBert()
        self.label_context = label_context
        self.tag2id = tag2id
        self.label_representation = self.build_label_representation(tag2id)  # expect: ADL017

    def build_label_representation(self, tag2id):
        tag_embeddings = []
        for tag in tag2id:
            input_ids = torch.tensor([self.label_context[tag]])
            _, pooler_output = self.label_encoder(input_ids)
            tag_embeddings.append(pooler_output)
        label_embeddings = torch.stack(tag_embeddings, dim=0)
        return label_embeddings.squeeze(1)

    def forward(self, input_ids):
        token_embeddings, _ = self.token_encoder(input_ids)
        tag_lens, hidden_size = self.label_representation.shape
        current_batch_size = token_embeddings.shape[0]
        label_embedding = self.label_representation.expand(current_batch_size, tag_lens, hidden_size)
        matrix_embeddings = torch.matmul(token_embeddings, label_embedding.transpose(2, 1))
        label_indexs = torch.argmax(torch.softmax(matrix_embeddings, dim=-1), dim=-1)
        return matrix_embeddings, label_indexs


def run():
    torch.manual_seed(0)
    tag2id = {"B-PER": 0, "I-PER": 1, "O": 2}
    label_context = {"B-PER": [3, 4, 5], "I-PER": [3, 4, 6], "O": [7, 8, 9]}
    fewshot = FewShot_NER(tag2id, label_context)
    optimizer = torch.optim.Adam(fewshot.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    loss_function = nn.CrossEntropyLoss()
    batches = [(torch.randint(0, 30, (2, 5)), torch.randint(0, 3, (2, 5))) for _ in range(3)]
    for input_ids, labels in batches:
        matrix_embeddings, _ = fewshot(input_ids)
        loss = loss_function(matrix_embeddings.view(-1, len(tag2id)), labels.view(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters=fewshot.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
    return fewshot
