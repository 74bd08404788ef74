"""fast.ai's NLP course, notebook 5-nn-imdb: the IMDb classifier starts from a language model
pretrained on Wikitext-103. Its embedding matrix is moved onto the IMDb vocabulary: rows of words
the pretrained vocabulary has are copied, and every new word gets the mean embedding. The notebook
then checks that two new words, "30-something" and "linklater", start from the same row:
`np.allclose(enc.weight[vocab.stoi["30-something"], :], enc.weight[vocab.stoi["linklater"], :])`.
The encoder's weight is a parameter that requires grad, so NumPy's conversion of the rows fails:
"Can't call numpy() on Variable that requires grad. Use var.detach().numpy() instead." The change
the message names: compare the rows detached from the graph.
Source: https://github.com/fastai/course-nlp/issues/47
expect: raises"""
from collections import Counter

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
EMB_SZ = 16

wiki_itos = ["xxunk", "xxpad", "the", "a", "movie", "film", "good", "bad", "great", "plot", "actor", "story"]
wiki_weights = torch.randn(len(wiki_itos), EMB_SZ)

imdb_reviews = [
    "the movie is a linklater film with a great plot",
    "a 30-something actor in a bad movie",
    "great story and a good actor , the plot is good",
    "the 30-something story of a linklater movie is great",
]
counts = Counter(word for review in imdb_reviews for word in review.split())
imdb_itos = ["xxunk", "xxpad"] + [word for word, count in counts.most_common() if count >= 2]
stoi = {word: i for i, word in enumerate(imdb_itos)}


def convert_weights(old_weights, old_itos, new_itos):
    # fastai's convert_weights: rows of known words are copied, new words get the mean row
    old_stoi = {word: i for i, word in enumerate(old_itos)}
    mean_row = old_weights.mean(0)
    new_weights = old_weights.new_zeros(len(new_itos), old_weights.size(1))
    for i, word in enumerate(new_itos):
        new_weights[i] = old_weights[old_stoi[word]] if word in old_stoi else mean_row
    return new_weights


class AWDLSTMEncoder(nn.Module):
    def __init__(self, vocab_sz, emb_sz):
        super().__init__()
        self.encoder = nn.Embedding(vocab_sz, emb_sz, padding_idx=1)
        self.rnn = nn.LSTM(emb_sz, emb_sz, batch_first=True)


language_model = AWDLSTMEncoder(len(imdb_itos), EMB_SZ)
language_model.encoder.weight.data = convert_weights(wiki_weights, wiki_itos, imdb_itos)
enc = language_model.encoder

same_start = np.allclose(enc.weight[stoi["30-something"], :], enc.weight[stoi["linklater"], :])
known_differs = not np.allclose(enc.weight[stoi["movie"], :], enc.weight[stoi["linklater"], :])

result = {"same_start": torch.tensor(same_start), "known_differs": torch.tensor(known_differs),
          "weight": enc.weight.detach().clone()}
