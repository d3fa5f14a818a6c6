"""Dataset-level leakage: secret contexts, exact / near-duplicate / unique partitions."""
