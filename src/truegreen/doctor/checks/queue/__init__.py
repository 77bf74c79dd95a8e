"""The queue check: whether Kueue would admit the training job, from Kueue's model
(doctor.knowledge.kueue)."""
