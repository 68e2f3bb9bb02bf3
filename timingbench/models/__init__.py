"""Run-time networks: the pretrained models that scoring runs (no training code here).

- :mod:`~timingbench.models.tagger` — the pretrained AudioSet tagger (EfficientAT mn04): weights,
  logits and embeddings every 0.32 s, the bank memo; its network in
  :mod:`~timingbench.models.tagger_model`, its log-mel in :mod:`~timingbench.models.tagger_frontend`.
- :mod:`~timingbench.models.family_net` — the render-trained family network (presence per frame,
  entered / left / nothing around every frame); :mod:`~timingbench.models.family_net_infer` runs the
  shipped weights on a clip's feature bank. Its training is :mod:`timingbench.identity.training`.
- :mod:`~timingbench.models.musicnn` — the MagnaTagATune musicnn tagger, ported to PyTorch.
- :mod:`~timingbench.models.singing` — FireRedVAD AED: speech / singing / music every 10 ms.
- :mod:`~timingbench.models.htdemucs_onnx` — htdemucs's ONNX export with demucs's STFT and segment loop.
"""
