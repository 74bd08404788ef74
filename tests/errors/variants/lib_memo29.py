"""Feature normalisation with a statistics cache."""


class CachedStandardiser:
    """Computes mean and std of a feature table once, again only when the table is written in place."""

    def __init__(self):
        self._key = None
        self._stats = None

    def __call__(self, table):
        key = (id(table), table._version)
        if key != self._key:
            self._key = key
            self._stats = (table.mean(0), table.std(0))
        mean, std = self._stats
        return (table - mean) / std
