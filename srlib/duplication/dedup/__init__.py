"""Exact and near-duplicate detection: tokens, MinHash/LSH near pairs, the exact / near /
unique partition (local and Dask) and the overlap audit."""
