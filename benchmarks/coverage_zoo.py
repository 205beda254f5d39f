"""The model zoo of the coverage benchmark: every causal-LM, masked-LM, seq2seq, image- and
audio-classification, CTC and speech-to-text architecture the installed `transformers` knows, each with
a small config derived from its config class, and a batch maker that follows the model's `main_input_name`.

How a config is made small (there are no per-model test configs in the installed package, so the
shrinking is generic, by attribute name, and checked by building the model):
- widths (`hidden_size`, `d_model`, `n_embd`, `embed_dim`, ...) -> 64, heads -> 4, key/value heads ->
  2, head_dim -> 16; feed-forward sizes -> 128; layers -> 2 (per-layer lists truncated to match);
- vocabularies -> 512 (at least one more than the largest special token id);
- MoE: experts -> 4, experts per token -> 2; expert sizes -> 64;
- vision: image size -> 64 (kept when the patch grid needs it), CNN stage widths/depths shrunk;
- nested sub-configs (text_config, vision_config, encoder/decoder) shrunk the same way.
- then attributes that configs derive from others at init, or that must agree with others, are made
  consistent again (`_make_consistent`: multi-head latent attention's qk_head_dim and per-head keys,
  Mamba-2 heads x head_dim = expand x hidden, BLT's cross-attention projection, HGNet-V2/EfficientNet
  channel chains, Reformer's axial positions, Perceiver's decoded length, encoder-decoder start token).
If the shrunk model does not build, a milder version (only layers and vocabulary shrunk) is tried.
"""
from __future__ import annotations

import copy
import math

WIDTH = 64
HEADS = 4
KV_HEADS = 2
FFN = 128
LAYERS = 2
VOCAB = 512
IMAGE = 64

_WIDTH_KEYS = {"hidden_size", "d_model", "n_embd", "embed_dim", "dim", "hidden_dim", "embedding_dim",
               "model_dim", "d_embed", "word_embed_proj_dim", "projection_dim", "text_embed_dim",
               "vision_embed_dim", "encoder_hidden_size", "decoder_hidden_size", "n_embed",
               "hidden_size_per_layer_input", "kv_lora_rank", "q_lora_rank", "embedding_size",
               "hidden_size_global", "d_latents", "cross_attention_hidden_size"}
_HEAD_KEYS = {"num_attention_heads", "n_head", "n_heads", "encoder_attention_heads",
              "decoder_attention_heads", "num_heads", "num_attention_heads_per_layer", "attention_heads",
              "encoder_num_attention_heads", "decoder_num_attention_heads", "linear_num_heads"}
_KV_KEYS = {"num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num",
            "num_key_value_groups"}
_FFN_KEYS = {"intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "d_ff",
             "ffn_hidden_size", "mlp_dim", "inner_hidden_size", "dim_feedforward", "decoder_intermediate_size",
             "encoder_intermediate_size", "feed_forward_proj_dim"}
_LAYER_KEYS = {"num_hidden_layers", "n_layer", "num_layers", "encoder_layers", "decoder_layers",
               "n_layers", "num_decoder_layers", "num_encoder_layers", "decoder_num_layers",
               "encoder_num_layers", "num_self_attends_per_block"}
_MOE_EXPERT_KEYS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts",
                    "num_experts_per_layer", "zero_expert_num"}
_MOE_SIZE_KEYS = {"moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size",
                  "expert_ffn_hidden_size"}
_TOPK_KEYS = {"num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_k", "top_k", "num_selected_experts", "n_group", "topk_group"}
_HEAD_DIM_KEYS = {"head_dim", "rotary_dim", "qk_rope_head_dim", "v_head_dim", "qk_nope_head_dim", "d_kv", "attention_head_dim",
                  "linear_head_dim", "attention_head_size"}


def _token_ids(cfg) -> int:
    best = 0
    for k, v in cfg.to_dict().items():
        if k.endswith("token_id") and isinstance(v, int):
            best = max(best, v)
        elif k.endswith("token_id") and isinstance(v, list):
            best = max([best] + [x for x in v if isinstance(x, int)])
    return best


def _layer_count_of(cfg) -> int | None:
    for k in _LAYER_KEYS:
        v = getattr(cfg, k, None)
        if isinstance(v, int):
            return v
    return None


def shrink(cfg, aggressive: bool = True):
    """A small copy of `cfg` (a transformers PretrainedConfig)."""
    cfg = copy.deepcopy(cfg)
    d = cfg.to_dict()
    for k, v in d.items():
        if isinstance(v, dict) and "model_type" in v or _is_config(getattr(cfg, k, None)):
            sub = getattr(cfg, k, None)
            if _is_config(sub):
                try:
                    setattr(cfg, k, shrink(sub, aggressive))
                except Exception:
                    pass
    old_layers = _layer_count_of(cfg)
    setv = lambda k, v: _set(cfg, k, v)
    for k in list(d):
        v = getattr(cfg, k, None)
        if isinstance(v, bool) or v is None:
            continue
        if k in _LAYER_KEYS and isinstance(v, int) and v > LAYERS:
            setv(k, LAYERS)
        elif k == "vocab_size" and isinstance(v, int) and v > VOCAB:
            setv(k, max(VOCAB, _token_ids(cfg) + 1))
        elif k.endswith("_vocab") and isinstance(v, int) and v > VOCAB:   # e.g. BLT's hash-embedding tables
            setv(k, VOCAB)
        if not aggressive:
            continue
        if k in _WIDTH_KEYS and isinstance(v, int) and v > WIDTH:
            setv(k, WIDTH)
        elif k in _HEAD_KEYS and isinstance(v, int) and v > HEADS:
            setv(k, HEADS)
        elif k in _KV_KEYS and isinstance(v, int) and v > KV_HEADS:
            setv(k, KV_HEADS)
        elif k in _FFN_KEYS and isinstance(v, int) and v > FFN:
            setv(k, FFN)
        elif k in _MOE_EXPERT_KEYS and isinstance(v, int) and v > 4:
            setv(k, 4)
        elif k in _MOE_SIZE_KEYS and isinstance(v, int) and v > WIDTH:
            setv(k, WIDTH)
        elif k in _TOPK_KEYS and isinstance(v, int) and v > 2:
            setv(k, 2 if k not in ("n_group", "topk_group") else 1)
        elif k in _HEAD_DIM_KEYS and isinstance(v, int) and v > WIDTH // HEADS:
            setv(k, WIDTH // HEADS)
        elif k == "image_size" and isinstance(v, int) and v > IMAGE:
            setv(k, IMAGE)
        elif k == "image_size" and isinstance(v, (list, tuple)) and len(v) == 2 and v[0] > IMAGE:
            setv(k, [IMAGE, IMAGE])
        elif k in ("hidden_sizes", "embed_dims", "hidden_dims", "widths", "embedding_dims") and _int_list(v):
            setv(k, [min(x, 16 * 2 ** i) for i, x in enumerate(v)])
        elif k in ("depths", "num_layers_per_stage", "layers", "block_repeats") and _int_list(v):
            setv(k, [1] * len(v))
        elif k in ("num_heads", "num_attention_heads") and _int_list(v):
            setv(k, [min(x, 2 * 2 ** i) for i, x in enumerate(v)])
        elif k in ("max_position_embeddings", "n_positions") and isinstance(v, int) and v > 4096:
            setv(k, 4096)
    # per-layer lists must follow the layer count
    new_layers = _layer_count_of(cfg)
    if old_layers and new_layers and new_layers < old_layers:
        for k, v in cfg.to_dict().items():
            if isinstance(v, list) and len(v) == old_layers and k not in ("depths", "hidden_sizes"):
                _set(cfg, k, v[:new_layers])
    if aggressive:
        _make_consistent(cfg)
    return cfg


def _make_consistent(cfg) -> None:
    """Attributes derived from others at config init (or that must agree with others) after shrinking."""
    get = lambda k: getattr(cfg, k, None)
    # LayerDrop skips whole layers at random in training: the real run compared against would then be a
    # coin toss. memplan's estimate is the no-drop peak (an upper bound); measure that same case.
    for key in list(cfg.to_dict()):
        if "layerdrop" in key.lower() and isinstance(get(key), float):
            _set(cfg, key, 0.0)
    # multi-head latent attention (DeepSeek-V2/V3 family): keys are per query head, and qk_head_dim is
    # nope + rope, computed at init from the unshrunk sizes
    if isinstance(get("kv_lora_rank"), int) and isinstance(get("qk_nope_head_dim"), int) \
            and isinstance(get("qk_rope_head_dim"), int):
        if isinstance(get("qk_head_dim"), int):
            _set(cfg, "qk_head_dim", get("qk_nope_head_dim") + get("qk_rope_head_dim"))
        if isinstance(get("num_key_value_heads"), int) and isinstance(get("num_attention_heads"), int):
            _set(cfg, "num_key_value_heads", get("num_attention_heads"))
    # MoE configs whose default leaves experts-per-token unset (DeepSeek-V2: None, the router's topk fails)
    if any(isinstance(get(k), int) for k in _MOE_EXPERT_KEYS) and "num_experts_per_tok" in cfg.to_dict() \
            and get("num_experts_per_tok") is None:
        _set(cfg, "num_experts_per_tok", 2)
    # Mamba-2 mixers: heads x head_dim must equal expand x hidden_size (the inner width), and the
    # groups must divide the heads
    hidden = get("hidden_size")
    for heads_k, dim_k, exp_k, groups_k in (("num_heads", "head_dim", "expand", "n_groups"),
                                            ("mamba_n_heads", "mamba_d_head", "mamba_expand", "mamba_n_groups"),
                                            ("n_mamba_heads", "mamba_headdim", "mamba_expand", "mamba_ngroups")):
        heads, exp = get(heads_k), get(exp_k)
        if isinstance(hidden, int) and isinstance(heads, int) and isinstance(get(dim_k), int) \
                and isinstance(exp, (int, float)) and not isinstance(exp, bool):
            heads = min(heads, HEADS)
            inner = int(exp * hidden)
            if isinstance(get("mamba_d_ssm"), int):   # Falcon-H1 sets the inner width explicitly
                _set(cfg, "mamba_d_ssm", inner)
            _set(cfg, heads_k, heads)
            _set(cfg, dim_k, inner // heads)
            if isinstance(get(groups_k), int):
                _set(cfg, groups_k, math.gcd(get(groups_k), heads))
    # Zamba2's shared attention works at twice the width (computed at init)
    if isinstance(get("attention_hidden_size"), int) and isinstance(hidden, int) \
            and isinstance(get("num_attention_heads"), int):
        _set(cfg, "attention_hidden_size", 2 * hidden)
        if isinstance(get("attention_head_dim"), int):
            _set(cfg, "attention_head_dim", 2 * hidden // get("num_attention_heads"))
    # encoder-decoder models need a decoder start token to shift labels right (T5's default config
    # has none in this transformers)
    if getattr(cfg, "is_encoder_decoder", False) and get("decoder_start_token_id") is None:
        if get("pad_token_id") is None:
            _set(cfg, "pad_token_id", 0)
        _set(cfg, "decoder_start_token_id", get("pad_token_id"))
    # HGNet-V2: stage channel lists chain into each other and the classifier reads hidden_sizes[-1]
    if _int_list(get("stage_out_channels")) and _int_list(get("stage_in_channels")):
        for k in ("stem_channels", "stage_in_channels", "stage_mid_channels", "stage_out_channels"):
            v = get(k)
            if _int_list(v):
                _set(cfg, k, [v[0]] + [max(x // 8, 4) for x in v[1:]] if k == "stem_channels"
                     else [max(x // 8, 4) for x in v])
        _set(cfg, "hidden_sizes", list(get("stage_out_channels")))
    # EfficientNet: the head's batch norm is sized hidden_dim = round_filters(1280)
    if getattr(cfg, "model_type", "") == "efficientnet":
        from transformers.models.efficientnet.modeling_efficientnet import round_filters

        _set(cfg, "width_coefficient", 0.5)
        _set(cfg, "depth_coefficient", 1.0)
        _set(cfg, "hidden_dim", round_filters(cfg, 1280))
    # BLT: the global transformer projects the encoder's cross-attention output (encoder width x
    # cross_attn_k) when it differs from its own width; the config computes this at init
    enc, glob = get("encoder_config"), get("global_config")
    if _is_config(enc) and _is_config(glob) and isinstance(get("cross_attn_k"), int):
        out = enc.hidden_size * get("cross_attn_k")
        _set(glob, "encoder_cross_output_size", out if out != glob.hidden_size else None)
    # Reformer: axial position embeddings factor the sequence (64 = 8 x 8) and their widths sum to
    # hidden_size
    if _int_list(get("axial_pos_shape")) and _int_list(get("axial_pos_embds_dim")) and isinstance(hidden, int):
        _set(cfg, "axial_pos_shape", (8, 8))
        _set(cfg, "axial_pos_embds_dim", (hidden // 4, hidden - hidden // 4))
    # ESMC normalises keys over the full width (q_norm/k_norm of hidden_size): multi-head, not grouped
    if getattr(cfg, "model_type", "") == "esmc" and isinstance(get("num_attention_heads"), int):
        _set(cfg, "num_key_value_heads", get("num_attention_heads"))
    # Perceiver MLM decodes max_position_embeddings positions: the input must be that long
    if getattr(cfg, "model_type", "") == "perceiver":
        _set(cfg, "max_position_embeddings", 64)


def _int_list(v) -> bool:
    return isinstance(v, (list, tuple)) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _is_config(x) -> bool:
    return x is not None and hasattr(x, "to_dict") and hasattr(x, "model_type")


def _set(cfg, k, v):
    try:
        setattr(cfg, k, v)
    except Exception:
        pass


# ---- the zoo ---------------------------------------------------------------------------------------

TASKS = {
    "causal-lm": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "masked-lm": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "seq2seq-lm": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "image-classification": "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES",
    "audio-classification": "MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES",
    "ctc": "MODEL_FOR_CTC_MAPPING_NAMES",
    "speech-seq2seq": "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
}


def architectures() -> list[tuple[str, str, str]]:
    """`(task, model_type, class name)` for every architecture of the tasks in `TASKS`."""
    from transformers.models.auto import modeling_auto

    out = []
    for task, mapping in TASKS.items():
        for model_type, cls_name in getattr(modeling_auto, mapping).items():
            if isinstance(cls_name, (list, tuple)):
                cls_name = cls_name[0]
            out.append((task, model_type, cls_name))
    return out


def build_small(model_type: str, cls_name: str):
    """(model class, small config, note) or raises."""
    import torch
    import transformers as tf

    tf.logging.set_verbosity_error()
    cls = getattr(tf, cls_name)
    cfg0 = tf.CONFIG_MAPPING[model_type]()
    last = None
    for aggressive in (True, False):
        cfg = shrink(cfg0, aggressive)
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        for attempt in range(2):
            try:
                with torch.device("meta"):
                    m = cls._from_config(cfg) if hasattr(cls, "_from_config") else cls(cfg)
                n = sum(p.numel() for p in m.parameters())
                return cls, cfg, n, ("shrunk" if aggressive else "layers+vocab only")
            except Exception as exc:  # noqa: BLE001 - try the milder config
                last = exc
                # LM heads on encoder architectures (ReformerModelWithLMHead) insist on a decoder config
                if attempt == 0 and "is_decoder=True" in str(exc) and not getattr(cfg, "is_decoder", True):
                    cfg.is_decoder = True
                    continue
                break
    raise last


def seq_len_for(cfg) -> int:
    mp = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    s = 64
    if isinstance(mp, int) and mp > 0:
        s = min(s, mp)
    return s


def make_batch_fn(task: str, cls, cfg):
    """A batch maker following the model's main input (`input_ids`, `pixel_values`, `input_values`,
    `input_features`)."""
    import torch

    main = getattr(cls, "main_input_name", "input_ids")
    vocab = getattr(cfg, "vocab_size", None) or getattr(getattr(cfg, "text_config", None), "vocab_size", None) or 100
    n_labels = max(getattr(cfg, "num_labels", 2) or 2, 1)
    seq_default = seq_len_for(cfg)

    def image_size():
        vc = getattr(cfg, "vision_config", None) or cfg
        size = getattr(vc, "image_size", None) or getattr(vc, "input_size", None) or 224
        if isinstance(size, dict):
            size = size.get("height", 224)
        if isinstance(size, (list, tuple)):
            size = size[-1]
        return int(size), int(getattr(vc, "num_channels", 3) or 3)

    def audio_inputs(batch_size: int, seq_len: int) -> dict:
        if main == "input_features" and getattr(cfg, "feature_projection_input_dim", None):
            # Wav2Vec2-BERT: stacked filter-bank frames, (batch, frames, feature_projection_input_dim)
            return {"input_features": torch.randn(batch_size, seq_len * 4, cfg.feature_projection_input_dim)}
        if getattr(cfg, "model_type", "") in ("audio-spectrogram-transformer", "ast"):
            return {"input_values": torch.randn(batch_size, cfg.max_length, cfg.num_mel_bins)}
        if main == "input_features":
            bins = getattr(cfg, "num_mel_bins", None) or getattr(cfg, "feature_size", 80)
            frames = 2 * getattr(cfg, "max_source_positions", 1500) if hasattr(cfg, "max_source_positions") else seq_len * 4
            if hasattr(cfg, "input_feat_per_channel"):   # Speech2Text: (batch, frames, features x channels)
                feats = cfg.input_feat_per_channel * getattr(cfg, "input_channels", 1)
                return {"input_features": torch.randn(batch_size, seq_len * 4, feats)}
            return {"input_features": torch.randn(batch_size, bins, frames)}
        return {main: torch.randn(batch_size, seq_len * 64)}

    def make_batch(batch_size: int, seq_len: int = seq_default):
        if task == "image-classification":
            size, chans = image_size()
            return {"pixel_values": torch.randn(batch_size, chans, size, size),
                    "labels": torch.randint(0, n_labels, (batch_size,))}
        if task == "audio-classification":
            return {**audio_inputs(batch_size, seq_len), "labels": torch.randint(0, n_labels, (batch_size,))}
        if task == "ctc":   # character targets, shorter than the frames the encoder makes; 0 is the blank
            return {**audio_inputs(batch_size, seq_len), "labels": torch.randint(1, vocab, (batch_size, 8))}
        if task == "speech-seq2seq":   # transcript tokens for the decoder (shifted right by the model)
            return {**audio_inputs(batch_size, seq_len), "labels": torch.randint(0, vocab, (batch_size, 16))}
        ids = torch.randint(0, vocab, (batch_size, seq_len))
        return {"input_ids": ids, "labels": ids.clone()}

    return make_batch
