"""IIIF manifests as an input to the archive build (issue #64)."""
