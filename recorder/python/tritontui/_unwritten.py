"""Outputs an aten op returns without writing them: their bytes are
whatever the memory held, so they are recorded like an allocation's (not
hashed, marked allocated), and a launch that reads them is told it read
uninitialized memory instead of a value some launch produced.

The attention kernels allocate their random-number state outputs with
``at::empty`` and fill them only when they draw a dropout mask
(``aten/src/ATen/native/transformers/cuda/attention.cu``,
``attention_backward.cu``, ``flash_api.cpp``): with ``dropout_p == 0``
they are never written, and differ from one process to the next."""

from __future__ import annotations

from typing import Any

# Returned tensors left unwritten when the op draws no dropout, by op.
RNG_STATE_OUTPUTS = {
    "_scaled_dot_product_efficient_attention": ("philox_seed", "philox_offset"),
    "_scaled_dot_product_cudnn_attention": ("philox_seed", "philox_offset"),
    "_scaled_dot_product_fused_attention_overrideable": ("philox_seed", "philox_offset"),
    "_scaled_dot_product_flash_attention": ("rng_state", "unused"),
    "_efficient_attention_forward": ("philox_seed", "philox_offset"),
    "_cudnn_attention_forward": ("philox_seed", "philox_offset"),
    "_flash_attention_forward": ("rng_state", "unused"),
}


def unwritten_outputs(base: str, inputs: list[tuple[str, str, Any]]) -> tuple[str, ...]:
    """Names of the outputs op ``base`` returns unwritten, given its
    ``(name, access, value)`` arguments."""
    outputs = RNG_STATE_OUTPUTS.get(base)
    if outputs is None:
        return ()
    dropout = next((value for name, _, value in inputs if name == "dropout_p"), None)
    return outputs if dropout == 0 else ()
