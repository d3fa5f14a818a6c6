"""Secret records and where they come from: contexts, SecretBench, CredData (vendored and
native layout), JSONL records and the generated teaching corpus."""
