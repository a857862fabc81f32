/*
 * perf_roofline.c - `calibrate roofline`: the physical bounds of a deployment and what
 * a run achieved against them (calib.h, "roofline").
 *
 * Every step is costed by the simulator's roofline (cb_sim_step_cost_compute):
 *   limit   = max(FLOPs / peak, bytes / bandwidth)          per GPU, the physics
 *   profile = max(FLOPs / (peak MFU), bytes / (bw MBU)) + all-reduce + overhead
 * Minimum TTFT: the prompt's prefill chunks of max_num_batched_tokens, one step each,
 * nothing else running. Minimum TPOT: one decode step of `batch` sequences at context
 * prompt + output/2. Maximum decode throughput: the largest batch whose sequences (each
 * prompt + output tokens at its end) fit the KV cache and max_num_seqs, over its step.
 *
 * Achieved (from records): MBU as Databricks defines it, (weights + KV bytes one
 * decode step moves) / (time per output token x peak bandwidth), with the step's batch
 * and context the time-weighted means over the run; MFU as all FLOPs the run's tokens
 * needed over (window x peak x GPUs).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/clock.h"
#include "calib/cstat_internal.h"
#include "calib/perf_internal.h"
#include "calibench/alloc.h"
#include "calibench/stats.h"

void cb_calib_roofline_default_params(cb_calib_roofline_params *p) {
  p->prompt_len = 1024;
  p->output_len = 128;
  p->batch = 1;
}

static double peak_linear(const cb_sim_params *p) {
  return p->weight_dtype == CB_SIM_DTYPE_FP8 && p->gpu.flops_fp8 > 0 ? p->gpu.flops_fp8
                                                                      : p->gpu.flops_bf16;
}

/* Add one step to a bound. */
static void add_step(const cb_sim_params *p, const cb_sim_batch_item *items, size_t n,
                     cb_calib_bound *b) {
  cb__step_unit u;
  cb__step_unit_of(p, items, n, &u);
  b->limit_ns += u.c_ns > u.m_ns ? u.c_ns : u.m_ns;
  b->profile_ns += cb__step_time(&u, p->mfu, p->mbu, (double)p->step_overhead_ns);
  b->flops += u.flops;
  b->bytes += u.bytes;
  b->steps++;
  b->memory_bound = u.m_ns / p->mbu >= u.c_ns / p->mfu;
}

/* One decode step of n sequences, each with `context` tokens already cached. */
static void decode_step(const cb_sim_params *p, int64_t n, double context, cb_calib_bound *b) {
  cb_sim_batch_item *items = cb_calloc((size_t)(n > 0 ? n : 1), sizeof *items);
  for (int64_t i = 0; i < n; i++)
    items[i] = (cb_sim_batch_item){.new_tokens = 1, .context_tokens = (int64_t)llround(context),
                                   .samples = 1};
  add_step(p, items, (size_t)n, b);
  cb_free(items);
}

cb_status cb_calib_roofline_compute(const cb_sim_params *p, const cb_calib_roofline_params *rp,
                                    cb_calib_roofline *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  cb_status st = cb_sim_params_validate(p, err);
  if (st == CB_OK) st = cb_sim_capacity_compute(p, &out->cap, err);
  if (st != CB_OK) return st;
  if (rp->prompt_len < 1 || rp->output_len < 1 || rp->batch < 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "prompt length, output length and batch must be >= 1 (got %lld, %lld, %lld)",
                        (long long)rp->prompt_len, (long long)rp->output_len, (long long)rp->batch);
  if (rp->prompt_len + rp->output_len > out->cap.max_model_len)
    return cb_error_set(err, CB_ERR_RANGE,
                        "prompt + output = %lld tokens exceeds the context window (%d tokens)",
                        (long long)(rp->prompt_len + rp->output_len), out->cap.max_model_len);
  out->params = *p;
  out->in = *rp;
  out->peak_flops = peak_linear(p);
  out->ridge_flop_per_byte = out->peak_flops / p->gpu.mem_bw;
  out->decode_context = (double)rp->prompt_len + (double)rp->output_len / 2.0;

  /* TTFT: chunks of the token budget; the last one samples the first token. */
  int64_t done = 0;
  while (done < rp->prompt_len) {
    int64_t c = rp->prompt_len - done;
    if (c > p->max_num_batched_tokens) c = p->max_num_batched_tokens;
    cb_sim_batch_item it = {.new_tokens = c, .context_tokens = done,
                            .samples = done + c == rp->prompt_len};
    add_step(p, &it, 1, &out->ttft);
    done += c;
  }
  decode_step(p, rp->batch, out->decode_context, &out->tpot);

  int64_t per_seq = rp->prompt_len + rp->output_len;
  int64_t by_kv = out->cap.max_tokens / per_seq;
  out->max_batch = by_kv < p->max_num_seqs ? by_kv : p->max_num_seqs;
  out->max_batch_limit = by_kv < p->max_num_seqs ? "kv_cache" : "max_num_seqs";
  if (out->max_batch < 1) out->max_batch = 1;
  decode_step(p, out->max_batch, out->decode_context, &out->tpot_at_max);
  out->max_decode_tokens_per_s_limit = (double)out->max_batch / out->tpot_at_max.limit_ns * 1e9;
  out->max_decode_tokens_per_s_profile = (double)out->max_batch / out->tpot_at_max.profile_ns * 1e9;
  return CB_OK;
}

/* ---- achieved ------------------------------------------------------------------------- */

cb_status cb_calib_achieved_compute(const cb_sim_params *p, const cb_record_set *set,
                                    const char *what, cb_calib_achieved *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  uint64_t t0 = UINT64_MAX, t1 = 0;
  double decode_time = 0, batch_time = 0, ctx_time = 0, gaps = 0, gap_ns = 0, tokens = 0;
  double flops = 0, prefill_flops = 0, ttft_ns = 0;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!cb_record_ok(r) || r->warmup || r->prompt_tokens < 1 || r->output_tokens < 1 ||
        !r->first_content_ns || cb_record_times_invalid(r) || !r->last_content_ns)
      continue;
    out->requests++;
    if (r->sent_ns < t0) t0 = r->sent_ns;
    if (r->end_ns > t1) t1 = r->end_ns;
    double P = (double)r->prompt_tokens, O = (double)r->output_tokens;
    /* FLOPs: the prefill (minus cached tokens) and O - 1 decode steps at mid context. */
    double cached = r->cached_tokens > 0 ? (double)r->cached_tokens : 0;
    cb_sim_batch_item pre = {.new_tokens = (int64_t)(P - cached), .context_tokens = (int64_t)cached,
                             .samples = 1};
    if (pre.new_tokens < 1) pre.new_tokens = 1;
    cb__step_unit u;
    cb__step_unit_of(p, &pre, 1, &u);
    prefill_flops += u.flops;
    flops += u.flops;
    ttft_ns += cb_clock_span_ns(r->sent_ns, r->first_content_ns);
    if (O > 1) {
      cb_sim_batch_item dec = {.new_tokens = 1, .context_tokens = (int64_t)(P + O / 2), .samples = 1};
      cb__step_unit_of(p, &dec, 1, &u);
      flops += u.flops * (O - 1);
      double d = cb_clock_span_ns(r->first_content_ns, r->last_content_ns);
      decode_time += d;
      ctx_time += d * (P + O / 2);
      gaps += O - 1;
      gap_ns += d;
      tokens += O - 1;
    }
  }
  if (!out->requests || gaps < 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "%s: no successful request with two or more output tokens: nothing to "
                        "measure", what ? what : "the run");
  out->window_s = (double)(t1 - t0) / 1e9;
  /* Sequences decoding at a time, time-weighted: total decode time over the span in
   * which any decoding happened (the window bounds it from above). */
  batch_time = decode_time / ((double)(t1 - t0));
  out->decode_batch = batch_time < 1 ? 1 : batch_time;
  out->decode_context = ctx_time / decode_time;
  out->itl_mean_ns = gap_ns / gaps;
  out->decode_tokens_per_s = tokens / out->window_s;
  int64_t b = (int64_t)llround(out->decode_batch);
  cb_calib_bound step = {0};
  decode_step(p, b, out->decode_context, &step);
  /* The bytes of a step at the fractional mean batch: interpolate linearly in batch. */
  cb_calib_bound step1 = {0};
  decode_step(p, b + 1, out->decode_context, &step1);
  double bytes = step.bytes + (step1.bytes - step.bytes) * (out->decode_batch - (double)b);
  out->mbu = bytes / (out->itl_mean_ns / 1e9 * p->gpu.mem_bw);
  out->mfu = flops / (out->window_s * peak_linear(p));
  out->prefill_mfu = prefill_flops / (ttft_ns / 1e9 * peak_linear(p));
  return CB_OK;
}

/* ---- output ------------------------------------------------------------------------------ */

static void bound_json(cb__jw *w, const char *key, const cb_calib_bound *b) {
  cb__jw_obj(w, key);
  cb__jw_num(w, "limit_ms", b->limit_ns / 1e6);
  cb__jw_num(w, "profile_ms", b->profile_ns / 1e6);
  cb__jw_num(w, "flops_per_gpu", b->flops);
  cb__jw_num(w, "bytes_per_gpu", b->bytes);
  cb__jw_int(w, "steps", (long long)b->steps);
  cb__jw_str(w, "bound_by", b->memory_bound ? "memory" : "compute");
  cb__jw_end(w, '}');
}

void cb_calib_roofline_write_json(const cb_calib_roofline *r, cb_buf *out) {
  const cb_sim_params *p = &r->params;
  cb__jw w;
  cb__jw_begin_result(&w, out, "calibrate.roofline");
  cb__jw_obj(&w, "deployment");
  cb__jw_str(&w, "model", p->model.name);
  cb__jw_str(&w, "gpu", p->gpu.name);
  cb__jw_int(&w, "tp", p->tp);
  cb__jw_str(&w, "weight_dtype", cb_sim_dtype_name(p->weight_dtype));
  cb__jw_str(&w, "kv_dtype", cb_sim_dtype_name(p->kv_dtype));
  cb__jw_num(&w, "mfu", p->mfu);
  cb__jw_num(&w, "mbu", p->mbu);
  cb__jw_num(&w, "step_overhead_us", (double)p->step_overhead_ns / 1e3);
  cb__jw_num(&w, "peak_flops_per_gpu", r->peak_flops);
  cb__jw_num(&w, "mem_bw_per_gpu", p->gpu.mem_bw);
  cb__jw_num(&w, "ridge_flop_per_byte", r->ridge_flop_per_byte);
  cb__jw_num(&w, "weight_bytes_per_gpu", r->cap.weight_bytes_per_gpu);
  cb__jw_num(&w, "kv_bytes_per_token_per_gpu", r->cap.kv_bytes_per_token_per_gpu);
  cb__jw_int(&w, "kv_cache_tokens", (long long)r->cap.max_tokens);
  cb__jw_int(&w, "max_model_len", r->cap.max_model_len);
  cb__jw_end(&w, '}');
  cb__jw_obj(&w, "inputs");
  cb__jw_int(&w, "prompt_len", (long long)r->in.prompt_len);
  cb__jw_int(&w, "output_len", (long long)r->in.output_len);
  cb__jw_int(&w, "batch", (long long)r->in.batch);
  cb__jw_num(&w, "decode_context", r->decode_context);
  cb__jw_end(&w, '}');
  bound_json(&w, "min_ttft", &r->ttft);
  bound_json(&w, "min_tpot", &r->tpot);
  cb__jw_obj(&w, "max_decode_throughput");
  cb__jw_int(&w, "batch", (long long)r->max_batch);
  cb__jw_str(&w, "batch_limited_by", r->max_batch_limit);
  cb__jw_num(&w, "limit_tokens_per_s", r->max_decode_tokens_per_s_limit);
  cb__jw_num(&w, "profile_tokens_per_s", r->max_decode_tokens_per_s_profile);
  bound_json(&w, "step", &r->tpot_at_max);
  cb__jw_end(&w, '}');
  if (r->has_run) {
    const cb_calib_achieved *a = &r->run;
    cb__jw_obj(&w, "achieved");
    cb__jw_str(&w, "dir", r->run_dir);
    cb__jw_int(&w, "requests", (long long)a->requests);
    cb__jw_num(&w, "window_s", a->window_s);
    cb__jw_num(&w, "decode_batch", a->decode_batch);
    cb__jw_num(&w, "decode_context", a->decode_context);
    cb__jw_num(&w, "itl_mean_ms", a->itl_mean_ns / 1e6);
    cb__jw_num(&w, "decode_tokens_per_s", a->decode_tokens_per_s);
    cb__jw_num(&w, "mbu", a->mbu);
    cb__jw_num(&w, "mfu", a->mfu);
    cb__jw_num(&w, "prefill_mfu_lower_bound", a->prefill_mfu);
    cb__jw_end(&w, '}');
  } else {
    cb__jw_null(&w, "achieved");
  }
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

static void ms(char *o, size_t n, double ns) { snprintf(o, n, "%.3f ms", ns / 1e6); }

void cb_calib_roofline_format(const cb_calib_roofline *r, cb_buf *out) {
  const cb_sim_params *p = &r->params;
  cb_buf_appendf(out,
                 "calibrate roofline: %s on %d x %s (weights %s, KV %s)\n"
                 "  peak %.4g FLOP/s and %.4g B/s per GPU: ridge %.0f FLOP/byte; weights %.2f GB "
                 "per GPU; KV cache %lld tokens\n"
                 "  profile: MFU %.3f, MBU %.3f, step overhead %.1f us\n\n",
                 p->model.name, p->tp, p->gpu.name, cb_sim_dtype_name(p->weight_dtype),
                 cb_sim_dtype_name(p->kv_dtype), r->peak_flops, p->gpu.mem_bw,
                 r->ridge_flop_per_byte, r->cap.weight_bytes_per_gpu / 1e9,
                 (long long)r->cap.max_tokens, p->mfu, p->mbu, (double)p->step_overhead_ns / 1e3);
  cb__table t;
  cb__table_init(&t, 5);
  const char *head[] = {"bound", "physical limit", "with profile", "steps", "bound by"};
  cb__table_row(&t, head);
  char a[64], b[64], c[32], label[96];
  snprintf(label, sizeof label, "min TTFT, %lld-token prompt", (long long)r->in.prompt_len);
  ms(a, sizeof a, r->ttft.limit_ns);
  ms(b, sizeof b, r->ttft.profile_ns);
  snprintf(c, sizeof c, "%lld", (long long)r->ttft.steps);
  const char *row1[] = {label, a, b, c, r->ttft.memory_bound ? "memory" : "compute"};
  cb__table_row(&t, row1);
  snprintf(label, sizeof label, "min TPOT, batch %lld at %.0f ctx", (long long)r->in.batch,
           r->decode_context);
  ms(a, sizeof a, r->tpot.limit_ns);
  ms(b, sizeof b, r->tpot.profile_ns);
  const char *row2[] = {label, a, b, "1", r->tpot.memory_bound ? "memory" : "compute"};
  cb__table_row(&t, row2);
  snprintf(label, sizeof label, "max decode, batch %lld (%s)", (long long)r->max_batch,
           r->max_batch_limit);
  snprintf(a, sizeof a, "%.0f tok/s", r->max_decode_tokens_per_s_limit);
  snprintf(b, sizeof b, "%.0f tok/s", r->max_decode_tokens_per_s_profile);
  const char *row3[] = {label, a, b, "1", r->tpot_at_max.memory_bound ? "memory" : "compute"};
  cb__table_row(&t, row3);
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  if (r->has_run) {
    const cb_calib_achieved *x = &r->run;
    cb_buf_appendf(out,
                   "\n  achieved by %s (%zu requests, %.1f s):\n"
                   "    decode: %.1f sequences x %.0f tokens of context per step, %.3f ms per "
                   "token -> MBU %.3f\n"
                   "    all tokens: %.0f decode tok/s; MFU %.3f over the window; prefill MFU "
                   ">= %.3f (TTFT includes queueing)\n",
                   r->run_dir, x->requests, x->window_s, x->decode_batch, x->decode_context,
                   x->itl_mean_ns / 1e6, x->mbu, x->decode_tokens_per_s, x->mfu, x->prefill_mfu);
  }
}
