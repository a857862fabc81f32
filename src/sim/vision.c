/*
 * vision.c - how many LLM tokens an image costs a vision-language model, and what
 * its vision encoder computes (docs/simulator.md, "Images").
 *
 * Resizing is Qwen2-VL's smart_resize (Hugging Face transformers,
 * src/transformers/models/qwen2_vl/image_processing_qwen2_vl.py), with factor =
 * patch_size · merge_size = 28:
 *   refuse max(h, w) / min(h, w) > 200
 *   h' = round(h / 28) · 28, w' = round(w / 28) · 28        (Python round: half to even)
 *   if h'·w' > max_pixels: β = sqrt(h·w / max_pixels),
 *        h' = max(28, floor(h / β / 28) · 28), w' = max(28, floor(w / β / 28) · 28)
 *   elif h'·w' < min_pixels: β = sqrt(min_pixels / (h·w)),
 *        h' = ceil(h · β / 28) · 28, w' = ceil(w · β / 28) · 28
 * The image becomes (h'/14)·(w'/14) patches of 14×14 pixels (× 2 frames, the image
 * repeated: temporal_patch_size 2) and the merger joins 2×2 patches into one token:
 * tokens = (h'/28)·(w'/28). Qwen2-VL-7B-Instruct's preprocessor_config.json sets
 * min_pixels 3136, max_pixels 12845056, patch_size 14, merge_size 2.
 *
 * Encoder FLOPs for P = (h'/14)·(w'/14) patches, ViT width D, MLP width F, depth L
 * (its config.json vision_config: depth 32, embed_dim 1280, mlp_ratio 4; hidden_size
 * 3584 is the merger's output), 2 FLOPs per multiply-add:
 *   patch embedding   2 · (3·T·p²·D) · P                 (Conv3d without bias)
 *   blocks            L · (2·(4D² + 2DF) · P + 4·D·P²)    (QKV+proj, MLP; QKᵀ and AV
 *                                                          over all P² pairs: Qwen2-VL's
 *                                                          ViT attends across the image)
 *   merger            2 · (4D·4D + 4D·out) · P / 4
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "calibench/sim.h"

int cb_sim_vision_preset(const char *model_name, cb_sim_vision *out) {
  /* Qwen/Qwen2-VL-7B-Instruct: config.json vision_config and preprocessor_config.json;
   * 675,759,104 encoder parameters (the paper's "675M ViT"). */
  static const cb_sim_vision qwen2_vl = {.patch_size = 14, .merge_size = 2,
                                         .temporal_patch = 2, .min_pixels = 3136,
                                         .max_pixels = 12845056, .depth = 32,
                                         .embed_dim = 1280, .mlp_dim = 5120, .out_dim = 3584};
  if (model_name && strcasecmp(model_name, "qwen2-vl-7b") == 0) {
    *out = qwen2_vl;
    return 1;
  }
  return 0;
}

cb_status cb_sim_vision_resize(const cb_sim_vision *v, int64_t height, int64_t width,
                               int64_t *rh, int64_t *rw, cb_error *err) {
  if (height < 1 || width < 1)
    return cb_error_set(err, CB_ERR_INVALID, "image %lldx%lld: a side is 0", (long long)width,
                        (long long)height);
  double h = (double)height, w = (double)width, f = v->patch_size * v->merge_size;
  double ratio = (h > w ? h : w) / (h < w ? h : w);
  if (ratio > 200)
    return cb_error_set(err, CB_ERR_INVALID,
                        "image %lldx%lld: absolute aspect ratio must be smaller than 200, got %g",
                        (long long)width, (long long)height, ratio);
  double hb = nearbyint(h / f) * f, wb = nearbyint(w / f) * f; /* ties to even, as Python */
  if (hb * wb > (double)v->max_pixels) {
    double beta = sqrt(h * w / (double)v->max_pixels);
    hb = fmax(f, floor(h / beta / f) * f);
    wb = fmax(f, floor(w / beta / f) * f);
  } else if (hb * wb < (double)v->min_pixels) {
    double beta = sqrt((double)v->min_pixels / (h * w));
    hb = ceil(h * beta / f) * f;
    wb = ceil(w * beta / f) * f;
  }
  *rh = (int64_t)hb;
  *rw = (int64_t)wb;
  return CB_OK;
}

int64_t cb_sim_vision_tokens(const cb_sim_vision *v, int64_t rh, int64_t rw) {
  int64_t f = (int64_t)v->patch_size * v->merge_size;
  return (rh / f) * (rw / f);
}

double cb_sim_vision_encoder_flops(const cb_sim_vision *v, int64_t rh, int64_t rw) {
  double p = v->patch_size, D = v->embed_dim, F = v->mlp_dim, L = v->depth;
  double P = (double)(rh / v->patch_size) * (double)(rw / v->patch_size);
  double m = (double)v->merge_size * v->merge_size; /* patches per token */
  double embed = 2.0 * (3.0 * v->temporal_patch * p * p * D) * P;
  double blocks = L * (2.0 * (4.0 * D * D + 2.0 * D * F) * P + 4.0 * D * P * P);
  double merger = 2.0 * (m * D * m * D + m * D * v->out_dim) * P / m;
  return embed + blocks + merger;
}
