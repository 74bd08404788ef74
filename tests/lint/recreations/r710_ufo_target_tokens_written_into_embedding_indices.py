"""UFO (unified fine-grained perception with an InternVL language model), issue 38: training the
caption task with batch size 1 raises "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.cuda.LongTensor [1, 426]] is at version 1;
expected version 0".  `forward_transformer` embeds the tokenized conversation
(`mm_embed = get_input_embeddings()(conversation_ids)`: the embedding keeps `conversation_ids`
as its saved indices), reshapes the ids back and forth, and at the end hands
`conversation_ids[:, min_pos:]` -- a view of those same indices -- to the task head as the
target tokens; the head's loss then masks the targets in place.  Writing into the view bumps
the version of the embedding's saved indices.  The maintainer's fix: `conversation_ids[:,
min_pos:].clone()`.
Re-created in my own words with a detector class holding a tiny language model (embedding,
one layer, output head) and a caption head whose `loss` builds its targets from the output dict.
Buggy line: the head's in-place write `target_tokens[token_weights == 0] = self.ignore_index`
into the view of the embedding's indices.
Source: https://github.com/nnnth/UFO/issues/38"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLanguageModel(nn.Module):
    def __init__(self, vocab=16, hidden=8):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, hidden)
        self.layer = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, vocab)

    def get_input_embeddings(self):
        return self.tok_embeddings


class CaptionHead(nn.Module):
    ignore_index = -100

    def loss(self, output_dict):
        losses = []
        for logits, target_tokens, token_weights in zip(output_dict['all_layer_pred_seq_logits'],
                                                        output_dict['all_layer_target_tokens'],
                                                        output_dict['all_layer_token_weights']):
            target_tokens[token_weights == 0] = self.ignore_index  # missed: ADL001, a view of embedding indices handed in a dict to another class's method, written there
            losses.append(F.cross_entropy(logits.reshape(-1, logits.size(-1)), target_tokens.reshape(-1),
                                          ignore_index=self.ignore_index))
        return sum(losses)


class UFO_InternVL(nn.Module):
    def __init__(self):
        super().__init__()
        self.language_model = TinyLanguageModel()
        self.caption_head = CaptionHead()
        self.img_context_token_id = 3

    def forward_transformer(self, patch_embed, conversations):
        conversation_ids = conversations['input_ids']
        mm_embed = self.language_model.get_input_embeddings()(conversation_ids).clone()
        token_weights = conversations['attention_mask'].clone()
        B, N, C = mm_embed.shape
        conversation_ids = conversation_ids.reshape(B * N)
        selected = conversation_ids == self.img_context_token_id
        mm_embed = mm_embed.reshape(-1, C)
        mm_embed[selected] = mm_embed[selected] * 0.0 + patch_embed.reshape(-1, C)
        mm_embed = mm_embed.reshape(B, N, C)
        selected = selected.reshape(B, N)
        conversation_ids = conversation_ids.reshape(B, N)
        token_weights[selected] = 0
        min_pos = 1
        input_embed = torch.tanh(self.language_model.layer(mm_embed))
        input_embed = input_embed[:, min_pos:]
        conversation_ids = conversation_ids[:, min_pos:]
        token_weights = token_weights[:, min_pos:]
        pred_seq_logits = self.language_model.output(input_embed)
        return {'all_layer_pred_seq_logits': [pred_seq_logits[:, :-1, :]],
                'all_layer_target_tokens': [conversation_ids[:, 1:]],
                'all_layer_token_weights': [token_weights[:, 1:]]}

    def loss(self, patch_embed, conversations):
        output_dict = self.forward_transformer(patch_embed, conversations)
        return self.caption_head.loss(output_dict)


def run():
    torch.manual_seed(0)
    model = UFO_InternVL()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    input_ids = torch.tensor([[1, 3, 3, 5, 6, 7, 2]])
    conversations = {'input_ids': input_ids, 'attention_mask': torch.ones_like(input_ids)}
    patch_embed = torch.randn(2, 8, requires_grad=True)
    loss = model.loss(patch_embed, conversations)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
