"""Run-time networks: the pretrained models that scoring runs (no training code here)."""
