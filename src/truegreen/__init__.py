"""truegreen: tells the operator of a Kubernetes training environment the truth about it."""

__version__ = "0.1.0"
