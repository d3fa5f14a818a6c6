"""Secret records and where they come from: contexts, SecretBench, CredData (vendored and native), JSONL and the generated teaching corpus."""
