"""Recording: what happened at run time (saves, writes, backward calls), nothing more."""
