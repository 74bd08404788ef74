"""Node embeddings trained for link prediction (a graph course's first exercise, on a small
random graph): the score of an edge is the sigmoid of the dot product of its two nodes'
embeddings, and the loss is the binary cross-entropy against the edge labels. The scores are
rounded to 0 or 1 before the loss (`emb_torch = emb_torch.round()`), to match the labels: the
round's gradient is zero everywhere, so every embedding's gradient is zero, the loss never moves,
and nothing trains, with no error. The change, from the answer: drop the round from the loss (round
only where accuracy is computed).
Source: https://go-mk-websites.co.uk/post/the-loss-in-gnn-doesnt-decrease
expect: silent"""
import torch
import torch.nn as nn
from torch.optim import SGD

torch.manual_seed(1)

num_nodes = 34
embedding_dim = 16
pos_edge_index = torch.randint(0, num_nodes, (2, 78))
neg_edge_index = torch.randint(0, num_nodes, (2, 78))
train_edge = torch.cat([pos_edge_index, neg_edge_index], dim=1)
train_label = torch.cat([torch.ones(78), torch.zeros(78)])

emb = nn.Embedding(num_embeddings=num_nodes, embedding_dim=embedding_dim)
emb.weight.data = torch.rand(num_nodes, embedding_dim)


def accuracy(pred, label):
    return round(((pred > 0.5).float() == label).float().mean().item(), 4)


def train(emb, loss_fn, sigmoid, train_label, train_edge):
    epochs = 50
    learning_rate = 0.1
    optimizer = SGD(emb.parameters(), lr=learning_rate, momentum=0.9)
    losses = []
    for i in range(epochs):
        emb.train()
        optimizer.zero_grad()
        node_list_fir, node_list_sec = (train_edge[0]), (train_edge[1])
        emb_list_fir, emb_list_sec = emb(node_list_fir), emb(node_list_sec)
        emb_torch = torch.sum(emb_list_fir * emb_list_sec, dim=1)
        emb_torch = sigmoid(emb_torch)
        emb_torch = emb_torch.round()
        loss = loss_fn(emb_torch, train_label)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        if i % 10 == 0:
            print("Epoch:", i, "Loss:", loss.item(), "Acc:", accuracy(emb_torch.detach(), train_label))
    return torch.stack(losses)


loss_fn = nn.BCELoss()
sigmoid = nn.Sigmoid()
losses = train(emb, loss_fn, sigmoid, train_label, train_edge)

result = {"losses": losses, "embeddings": emb.weight.detach().clone()}
