def add_tokens(model, count):
    """Grow the embedding by `count` rows, started at the mean of the existing rows."""
    weight = model.embedding.weight
    known = weight.shape[0]
    mean = weight.detach().mean(0)
    weight.resize_(known + count, weight.shape[1])  # PRIMARY
    weight.data[known:] = mean
    model.embedding.num_embeddings = known + count
