"""A real pretrained model in the book: the locked SmolLM2, audited against the fresh
benchmark and leaked on purpose (``config``: what runs; ``study``: how)."""
