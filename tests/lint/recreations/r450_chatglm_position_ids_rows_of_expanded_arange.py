"""A GLM-style model computes its position ids when the caller gives none:
`torch.arange(seq_length).expand(batch_size, seq_length)`, then, for each
prompt of the batch, a write of the row's tail, `position_ids[i,
context_length:] = mask_positions[i]`.  The expanded tensor has one row of
memory shared by every row, and the row write (a plain stride-1 view, so
nothing raises) lands in that shared row: each prompt's write changes the
position ids of all prompts.  In a batch of prompts of different lengths
every row ends with the same ids, so each prompt but the last is embedded at
wrong positions and the batched output differs from the output of the same
prompt alone.  Silent.  The fix builds the rows with `.unsqueeze(0).repeat(
batch_size, 1)` (what the upstream model changed to).  Found by the first
run of set X (docs/lint.md, twenty-sixth check).
Source: https://github.com/yuanzhoulvpi2017/zero_nlp
(Chatglm6b_ModelParallel_ptuning/modeling_chatglm.py, get_position_ids)"""
import torch
import torch.nn as nn

BOS = 1
MASK = 2


class TinyGLM(nn.Module):
    def __init__(self, vocab=12, width=8, max_length=16, correct=False):
        super().__init__()
        self.correct = correct
        self.word_embeddings = nn.Embedding(vocab, width)
        self.position_embeddings = nn.Embedding(max_length, width)
        self.head = nn.Linear(width, vocab)

    def get_position_ids(self, input_ids):
        batch_size, seq_length = input_ids.shape
        context_lengths = [row.tolist().index(BOS) for row in input_ids]
        mask_positions = [row.tolist().index(MASK) for row in input_ids]
        if self.correct:
            position_ids = torch.arange(seq_length).unsqueeze(0).repeat(batch_size, 1)
            for i, context_length in enumerate(context_lengths):
                position_ids[i, context_length:] = mask_positions[i]
        else:
            position_ids = torch.arange(seq_length).expand(batch_size, seq_length)
            for i, context_length in enumerate(context_lengths):
                position_ids[i, context_length:] = mask_positions[i]  # expect: ADL012
        return position_ids

    def forward(self, input_ids):
        hidden = self.word_embeddings(input_ids) + self.position_embeddings(self.get_position_ids(input_ids))
        return self.head(torch.tanh(hidden))


def prompts():
    # two prompts of different lengths: [tokens..., MASK, BOS, answer...]
    short = [5, MASK, BOS, 7, 8, 9, 3, 4]
    long = [5, 6, 7, 8, MASK, BOS, 9, 3]
    return torch.tensor([short, long])


def batched_equals_alone(correct):
    torch.manual_seed(0)
    model = TinyGLM(correct=correct)
    input_ids = prompts()
    batched = model(input_ids)
    alone = torch.cat([model(input_ids[i:i + 1]) for i in range(len(input_ids))])
    return torch.equal(batched, alone)


def bug_shows():
    return not batched_equals_alone(correct=False) and batched_equals_alone(correct=True)
