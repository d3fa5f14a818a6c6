"""The duplication-impact study: evaluation scenarios, detectors and references, the study runner, drops net of composition, cluster-resampled intervals and verdicts."""
