"""The queue check: whether Kueue would admit the training job; its flavor assignment lives
here, on Kueue's model in doctor.knowledge.kueue."""
