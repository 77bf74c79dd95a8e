"""The image-pull check: whether every image has the registry login it needs, and whether
the registries have it."""
