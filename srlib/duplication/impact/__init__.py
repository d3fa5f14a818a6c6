"""The duplication-impact study: evaluation scenarios, detectors and references, the study
runner, cluster-resampled intervals, drops net of composition and verdicts."""
