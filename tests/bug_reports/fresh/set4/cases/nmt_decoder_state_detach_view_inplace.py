"""Translation model trained with truncated backpropagation over a long target: the decoder state
carried to the next chunk is the last time step of the output (a view), cut from the graph with
`detach_()`, which a view does not allow.
Source: https://github.com/Eurus-Holmes/MNMT/issues/6 ("Can't detach views in-place. Use detach()
instead"; answer: use `detach()`, out of place).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, hidden = 12, 8
encoder = nn.GRU(hidden, hidden, batch_first=True)
decoder = nn.GRU(hidden, hidden, batch_first=True)
embed = nn.Embedding(vocab, hidden)
generator = nn.Linear(hidden, vocab)
params = [*encoder.parameters(), *decoder.parameters(), *embed.parameters(), *generator.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-2)

source = torch.randint(0, vocab, (2, 5))
target = torch.randint(0, vocab, (2, 9))

_, enc_state = encoder(embed(source))
dec_state = enc_state.detach()
losses = []
for start in range(0, target.shape[1] - 1, 4):
    chunk_in, chunk_out = target[:, start:start + 4], target[:, start + 1:start + 5]
    chunk_in = chunk_in[:, :chunk_out.shape[1]]
    outputs, _ = decoder(embed(chunk_in), dec_state)
    loss = nn.functional.cross_entropy(generator(outputs).flatten(0, 1), chunk_out.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    dec_state = outputs[:, -1].unsqueeze(0)
    dec_state.detach_()
result = {"losses": losses, "params": [p.detach() for p in params]}
