"""The controlled testbed: local corpora, training with a known leaked split, experiments."""
