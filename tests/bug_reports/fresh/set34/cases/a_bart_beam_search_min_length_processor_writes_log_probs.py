"""transformers, generation `beam_search`: the reporter trained a BART generator through its own
beam search (the `@torch.no_grad()` of `generate` removed, a `BeamSearchScorer` and a
`LogitsProcessorList` with a minimum length), backpropagating a reward-weighted loss through the
beam scores. `loss.backward()` failed with a RuntimeError naming log_softmax: beam search takes
`next_token_scores = nn.functional.log_softmax(next_token_logits, dim=-1)` and hands it to the
logits processors, and `MinLengthLogitsProcessor` wrote `scores[:, self.eos_token_id] =
-float("inf")` into it in place, while LogSoftmax keeps its output for its backward. Later
transformers releases made the processors out of place (`scores_processed = torch.where(
eos_token_mask, -math.inf, scores)`), the change the correct version makes.
Source: https://github.com/huggingface/transformers/issues/13954
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HIDDEN, EOS, BOS = 12, 16, 2, 0


class MinLengthLogitsProcessor:
    def __init__(self, min_length, eos_token_id):
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores):
        cur_len = input_ids.shape[-1]
        if cur_len < self.min_length:
            scores[:, self.eos_token_id] = -float("inf")
        return scores


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


class TinyBart(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.encoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.decoder = nn.GRUCell(HIDDEN, HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB)

    def encode(self, input_ids):
        _, h = self.encoder(self.embed(input_ids))
        return h[0]


def beam_search(model, input_ids, num_beams, max_length, logits_processor):
    batch_size = input_ids.shape[0]
    hidden = model.encode(input_ids).repeat_interleave(num_beams, dim=0)
    decoder_input_ids = torch.full((batch_size * num_beams, 1), BOS, dtype=torch.long)
    beam_scores = torch.zeros(batch_size, num_beams)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view(-1)
    for _ in range(max_length - 1):
        hidden = model.decoder(model.embed(decoder_input_ids[:, -1]), hidden)
        next_token_logits = model.lm_head(hidden)
        next_token_scores = F.log_softmax(next_token_logits, dim=-1)
        next_token_scores_processed = logits_processor(decoder_input_ids, next_token_scores)
        next_token_scores = next_token_scores_processed + beam_scores[:, None]
        next_token_scores = next_token_scores.view(batch_size, num_beams * VOCAB)
        top_scores, top_tokens = torch.topk(next_token_scores, num_beams, dim=1)
        beam_idx = (top_tokens // VOCAB) + torch.arange(batch_size)[:, None] * num_beams
        next_tokens = top_tokens % VOCAB
        beam_idx = beam_idx.view(-1)
        decoder_input_ids = torch.cat([decoder_input_ids[beam_idx], next_tokens.view(-1, 1)], dim=-1)
        hidden = hidden[beam_idx]
        beam_scores = top_scores.view(-1)
    return decoder_input_ids.view(batch_size, num_beams, -1), beam_scores.view(batch_size, num_beams)


def reward(sequences, batch):
    # overlap with the reference tokens, the reporter's task-specific score
    return (sequences[:, 0, 1:] == batch["labels"][:, : sequences.shape[-1] - 1]).float().mean(dim=-1)


generator = TinyBart()
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
logits_processor = LogitsProcessorList([MinLengthLogitsProcessor(min_length=4, eos_token_id=EOS)])
history = []
for step in range(3):
    batch = {"input_ids": torch.randint(3, VOCAB, (2, 5)), "labels": torch.randint(3, VOCAB, (2, 6))}
    sequences, sequence_scores = beam_search(generator, batch["input_ids"], num_beams=3, max_length=6,
                                             logits_processor=logits_processor)
    r = reward(sequences, batch)
    loss = -((r - r.mean()) * sequence_scores[:, 0]).mean() - 0.01 * sequence_scores[:, 0].mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(loss.detach())

result = {"losses": torch.stack(history), "params": [p.detach().clone() for p in generator.parameters()]}
