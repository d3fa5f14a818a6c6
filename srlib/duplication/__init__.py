"""Dataset-level leakage in secret detection, in three rooms: ``data`` (secret records and
their loaders: SecretBench, CredData, JSONL, the generated corpus), ``dedup`` (exact and
near-duplicate detection and the partition, also used by the testbed's decontamination) and
``impact`` (the duplication-impact study: scenarios, detectors, references, drops, verdicts)."""
