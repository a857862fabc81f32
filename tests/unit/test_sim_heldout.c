/*
 * test_sim_heldout.c - the simulator's defaults against published measurements they
 * were NOT derived from (docs/simulator.md, "Held-out checks"). The defaults come
 * from three other figures (test_sim_physics.c); these runs check that the model
 * carries over to another model size, weight format, tensor parallelism, prompt
 * length and load.
 *
 * The serving checks run the engine closed loop, as a benchmark client with a fixed
 * concurrency does: N requests in flight, each replaced by a new one the moment its
 * last token is produced (it then misses the step the engine has already begun, as a
 * request that reaches vLLM after its next step started does). Prompts are distinct
 * (no prefix hits), outputs fixed-length (ignore_eos).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/sim.h"
#include "calibench/workload.h"
#include "test_sim_common.h"

typedef struct loop_run {
  sim_req_times *r;           /* one per request sent */
  size_t n_counted;      /* requests 0..n_counted-1 are the ones waited for */
  size_t n_counted_done; /* of those, finished */
  size_t n_finished_now; /* finished in the current advance() call */
} loop_run;

typedef struct loop_result {
  double ttft_ms;    /* mean over measured requests */
  double itl_ms;     /* mean gap between a request's tokens, over measured requests */
  double tput_tok_s; /* steady-state output tokens/s: conc × osl / mean end-to-end latency
                        (Little's law for a closed loop; no ramp-up or drain in it) */
} loop_result;

static void on_event(void *ctx, const cb_sim_event *ev) {
  loop_run *lr = ctx;
  sim_req_times *q = &lr->r[ev->request_id];
  if (ev->kind == CB_SIM_EV_TOKEN) {
    sim_req_token(q, ev->time_ns);
  } else if (ev->kind == CB_SIM_EV_FINISHED) {
    lr->n_finished_now++;
    if (ev->request_id < lr->n_counted) lr->n_counted_done++;
  }
}

static void send_request(cb_sim_engine *e, loop_run *lr, size_t id, size_t isl, int64_t osl,
                         uint64_t now, uint32_t *prompt) {
  /* Distinct prompts: no two requests share a block, so nothing hits the prefix cache. */
  for (size_t k = 0; k < isl; k++)
    prompt[k] = (uint32_t)(((uint64_t)id * 1000003u + k * 7919u) % 120000u) + 1u;
  cb_sim_request rq = {.id = id, .prompt_ids = prompt, .prompt_len = isl, .output_len = osl,
                       .output_seed = id};
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_add(e, &rq, now, &err) != CB_OK) fail_msg("add: %s", err.msg);
  lr->r[id].sent_ns = now;
}

/* A length drawn around len as `--len-dist uniform --len-spread spread` draws it
 * (cb_dataset_len_sample), from a stream per request and which length; len itself when
 * spread is 0. */
static int64_t draw_len(int64_t len, double spread, size_t id, unsigned which) {
  cb_dataset_len d = {.kind = spread > 0 ? CB_LEN_UNIFORM : CB_LEN_FIXED, .mean = (double)len,
                      .spread = spread};
  cb_rng rng;
  cb_rng_init_stream(&rng, 20261203, which, id);
  return cb_dataset_len_sample(&d, &rng);
}

/* Closed loop at concurrency conc: the first warm requests are not measured (the
 * start, when all conc arrive at once, is not the steady state the tables report),
 * the next measured ones are, and conc more are sent after them so that the measured
 * ones run to the end under the full load (no drain). Prompt and output lengths are
 * isl and osl, or drawn around them when spread > 0 (draw_len). */
static loop_result closed_loop_spread(const cb_sim_params *p, size_t conc, size_t isl,
                                      int64_t osl, double spread, size_t warm,
                                      size_t measured) {
  cb_sim_engine *e;
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_new(p, &e, &err) != CB_OK) fail_msg("engine: %s", err.msg);
  size_t total = warm + measured, cap = total + conc;
  loop_run lr = {.r = cb_calloc(cap, sizeof(sim_req_times)), .n_counted = total};
  int64_t *in_len = cb_calloc(cap, sizeof *in_len), *out_len = cb_calloc(cap, sizeof *out_len);
  size_t longest = 0;
  for (size_t i = 0; i < cap; i++) {
    in_len[i] = draw_len((int64_t)isl, spread, i, 0);
    out_len[i] = draw_len(osl, spread, i, 1);
    if ((size_t)in_len[i] > longest) longest = (size_t)in_len[i];
  }
  uint32_t *prompt = cb_malloc(longest * sizeof *prompt);
  size_t sent = 0;
  for (; sent < conc; sent++)
    send_request(e, &lr, sent, (size_t)in_len[sent], out_len[sent], 0, prompt);
  while (lr.n_counted_done < total) {
    uint64_t now = cb_sim_engine_next_event_ns(e);
    if (now == UINT64_MAX) fail_msg("the engine stopped with %zu of %zu requests done",
                                    lr.n_counted_done, total);
    lr.n_finished_now = 0;
    cb_sim_engine_advance(e, now, on_event, &lr);
    for (size_t k = 0; k < lr.n_finished_now && sent < cap; k++, sent++)
      send_request(e, &lr, sent, (size_t)in_len[sent], out_len[sent], now, prompt);
  }
  loop_result res = {0};
  double e2e_s = 0;
  for (size_t i = warm; i < total; i++) {
    const sim_req_times *q = &lr.r[i];
    assert_int_equal(q->tokens, out_len[i]);
    res.ttft_ms += (double)(q->first_ns - q->sent_ns) / 1e6;
    res.itl_ms += (double)(q->last_ns - q->first_ns) / (double)(out_len[i] - 1) / 1e6;
    e2e_s += (double)(q->last_ns - q->sent_ns) / 1e9;
  }
  res.ttft_ms /= (double)measured;
  res.itl_ms /= (double)measured;
  res.tput_tok_s = (double)conc * (double)osl / (e2e_s / (double)measured);
  cb_free(in_len);
  cb_free(out_len);
  cb_free(prompt);
  cb_free(lr.r);
  cb_sim_engine_free(e);
  return res;
}

static loop_result closed_loop(const cb_sim_params *p, size_t conc, size_t isl, int64_t osl,
                               size_t warm, size_t measured) {
  return closed_loop_spread(p, conc, isl, osl, 0, warm, measured);
}

static void show(const char *what, const loop_result *r) {
  print_message("%s: TTFT %.2f ms, ITL %.2f ms, %.2f tok/s\n", what, r->ttft_ms, r->itl_ms,
                r->tput_tok_s);
}

/* got within rel of a reference: a published figure, or a real engine's measured here */
static void within(double got, double ref, double rel, const char *what) {
  double dev = (got - ref) / ref;
  if (fabs(dev) > rel)
    fail_msg("%s: simulated %.2f, reference %.2f (%+.1f%%, tolerance ±%.0f%%)", what, got, ref,
             dev * 100, rel * 100);
}

/*
 * NVIDIA NIM LLM benchmarking, "Performance", Llama-3.3-70b-instruct, NIM 1.8.0,
 * 2 x H100 80G, fp8, TP2, 5000 input / 500 output tokens, AIPerf closed loop
 * (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md):
 *   concurrency  1: TTFT 406.77 ms, ITL 18.58 ms,  51.67 tokens/s
 *   concurrency  5: TTFT 546.70 ms, ITL 21.83 ms, 218.48 tokens/s
 *   concurrency 25: TTFT 688.69 ms, ITL 38.75 ms, 623.40 tokens/s
 *   concurrency 50: TTFT 834.51 ms, ITL 59.73 ms, 814.37 tokens/s
 * Llama-3.3-70B has Llama-3.1-70B's architecture (the preset). FP8 weights (W8A8) and,
 * as the table's own ITL growth says, an FP8 KV cache: ITL rises by 0.13 ms per request
 * in flight (a fit of all four rows, docs/simulator.md), the KV read of ~5,250 fp8
 * tokens per request; a bf16 cache would cost twice that.
 *
 * Tolerance ±15 %: the same table for the previous release (NIM 1.5.0, same GPUs and
 * settings) gives 368.11 ms / 19.94 ms / 48.44 tok/s at concurrency 1, ITL 23.89, 42.12
 * and 63.72 ms and 199.17, 564.5 and 738.78 tok/s at 5, 25 and 50: release-to-release
 * spreads of 7–10 %; 15 % is that spread with margin. TTFT is held at concurrency 1
 * only: under load it depends on how the closed loop's requests fall into step with
 * each other, which is about 2x the published value here (docs/simulator.md, "Held-out
 * checks", says why; test_fixed_length_convoy_as_llama_server below holds that convoy
 * against a real engine). ITL and throughput do not depend on it. The loop below is the
 * published workload, not a simplification of it: NIM's sweep pins every output at 500
 * tokens (ignore_eos, min_tokens = max_tokens) and asks for 5,000-token prompts with
 * stddev 0, so no length varies by more than the chat template's few tokens
 * (docs/simulator.md, "What the published run sent", gives the sources).
 */
static cb_sim_params nim_70b_fp8_tp2(void) {
  cb_sim_params p;
  cb_sim_default_params(&p);
  assert_int_equal(cb_sim_preset_model("llama-3.1-70b", &p.model, NULL), CB_OK);
  assert_int_equal(cb_sim_preset_gpu("h100-sxm", &p.gpu, NULL), CB_OK);
  cb_sim_params_apply_gpu_defaults(&p);
  p.tp = 2;
  p.weight_dtype = CB_SIM_DTYPE_FP8;
  p.kv_dtype = CB_SIM_DTYPE_FP8;
  return p;
}

static void nim_check(size_t conc, double ttft, double itl, double tput) {
  cb_sim_params p = nim_70b_fp8_tp2();
  loop_result r = closed_loop(&p, conc, 5000, 500, 2 * conc, conc < 5 ? 6 : 8 * conc);
  char what[64];
  snprintf(what, sizeof what, "NIM 70B fp8 TP2, 5000/500, conc %zu", conc);
  show(what, &r);
  if (ttft > 0) {
    snprintf(what, sizeof what, "conc %zu TTFT (ms)", conc);
    within(r.ttft_ms, ttft, 0.15, what);
  }
  snprintf(what, sizeof what, "conc %zu ITL (ms)", conc);
  within(r.itl_ms, itl, 0.15, what);
  snprintf(what, sizeof what, "conc %zu throughput (tok/s)", conc);
  within(r.tput_tok_s, tput, 0.15, what);
}

static void test_nim_llama70b_fp8_tp2_h100_5000_500(void **state) {
  (void)state;
  nim_check(1, 406.77, 18.58, 51.67);
  nim_check(5, 0, 21.83, 218.48);
  nim_check(25, 0, 38.75, 623.40);
  nim_check(50, 0, 59.73, 814.37);
}

/*
 * vLLM's performance benchmark (Buildkite pipeline vllm/performance-benchmark), latency
 * test: one fixed batch of 8 prompts of 32 tokens, 128 output tokens each, random
 * ("dummy") weights, end-to-end latency of the batch. The same pipeline and commit
 * series ran on each GPU:
 *   H200 (builds 9513, 9515): 8B TP1 834.06 / 833.42 ms, 70B TP4 2075.08 / 2077.53 ms,
 *                             Mixtral-8x7B TP2 1921.1 / 1917.44 ms
 *   H100 (build 9555):        8B 997.542 ms, 70B TP4 2444.47 ms, Mixtral TP2 2326.97 ms
 *   A100-SXM4-80GB (9523):    8B 1579.27 ms, 70B TP4 3990.59 ms, Mixtral TP2 3643.84 ms
 * (https://buildkite.com/vllm/performance-benchmark/builds/9513, /9515, /9523, /9555).
 * That engine's per-step CPU time is not the V1 API server's our H100 anchor was
 * measured with, so the absolute latencies are not comparable; the ratio between two
 * GPUs under the same software is: it isolates what the GPU model predicts. The H200
 * MBU is derived from the 8B row (docs/simulator.md); the 70B and Mixtral rows are
 * held out, as are all A100/H100 ratios (the A100 and H100 defaults come from other
 * figures).
 *
 * Tolerances: the two H200 builds agree to 0.2 %, so the spread is the model's own: ±5 %
 * for H200/H100 (the same model, TP and MoE terms on both sides), ±8 % for A100/H100
 * (A100's MFU and bandwidth differ in kind; its 70B TP4 row is the farthest, −6.8 %,
 * TP overheads being under-modelled).
 */
static double batch_latency_ms(const char *model, const char *gpu, int tp) {
  cb_sim_params p = sim_preset(model, gpu, tp);
  cb_sim_engine *e;
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_new(&p, &e, &err) != CB_OK) fail_msg("engine: %s", err.msg);
  loop_run lr = {.r = cb_calloc(8, sizeof(sim_req_times)), .n_counted = 8};
  uint32_t prompt[32];
  for (size_t i = 0; i < 8; i++) send_request(e, &lr, i, 32, 128, 0, prompt);
  for (uint64_t now; (now = cb_sim_engine_next_event_ns(e)) != UINT64_MAX;)
    cb_sim_engine_advance(e, now, on_event, &lr);
  uint64_t end = 0;
  for (size_t i = 0; i < 8; i++) {
    assert_int_equal(lr.r[i].tokens, 128);
    if (lr.r[i].last_ns > end) end = lr.r[i].last_ns;
  }
  cb_free(lr.r);
  cb_sim_engine_free(e);
  return (double)end / 1e6;
}

static void check_ratios(const char *model, int tp, double pub_a100, double pub_h100,
                         double pub_h200, int h200_held_out) {
  double a100 = batch_latency_ms(model, "a100-80g", tp);
  double h100 = batch_latency_ms(model, "h100-sxm", tp);
  double h200 = batch_latency_ms(model, "h200", tp);
  print_message("%s TP%d batch 8, 32/128: A100 %.1f ms, H100 %.1f ms, H200 %.1f ms\n", model,
                tp, a100, h100, h200);
  char what[96];
  snprintf(what, sizeof what, "%s TP%d latency A100/H100", model, tp);
  within(a100 / h100, pub_a100 / pub_h100, 0.08, what);
  if (h200_held_out) {
    snprintf(what, sizeof what, "%s TP%d latency H200/H100", model, tp);
    within(h200 / h100, pub_h200 / pub_h100, 0.05, what);
  }
}

static void test_vllm_latency_bench_gpu_ratios(void **state) {
  (void)state;
  check_ratios("llama-3.1-8b", 1, 1579.27, 997.542, 833.74, 0); /* H200 MBU derived here */
  check_ratios("llama-3.1-70b", 4, 3990.59, 2444.47, 2076.31, 1);
  check_ratios("mixtral-8x7b", 2, 3643.84, 2326.97, 1919.27, 1);
}

/*
 * A real engine's closed loop at fixed lengths: llama.cpp's llama-server (continuous
 * batching, 4 slots, one CPU core, a 60 M-parameter random-weight model), measured here
 * by bench/llama_convoy.sh (bench/RESULTS.md, "Fixed-length convoy"). 4 requests in
 * flight, ~245-token prompts and 64 output tokens, each replaced the moment it ends;
 * then the same with prompt and output lengths spread ±20 %. Mean TTFT with fixed
 * lengths over mean TTFT with spread lengths, two runs each:
 *   one prompt per step (-b 320):    1.72, 1.74
 *   all four prompts fit (-b 2048):  2.77, 2.78
 * Nothing in the simulator was fitted to llama-server. The simulator runs the same loop
 * in the same two regimes at its own scale: 2,000-token prompts on the default 8B/H100
 * deployment, a step budget of 2,100 tokens or the default 8,192 (a prefill alone is
 * ~10 decode steps of 4 there as on llama-server's core, and prefills take ~1/3 of a
 * cycle on both). The engines' step costs differ, so the check is the convoy's size,
 * within ±25 %: with lengths that are exactly equal, requests that start together end
 * together and queue for each other's prefills again, on a real engine as in the model
 * (docs/simulator.md, "Held-out checks": why TTFT under load at fixed lengths is held
 * here and not against NIM's table).
 */
static void convoy_check(size_t budget, double llama_ratio) {
  cb_sim_params p = sim_preset("llama-3.1-8b", "h100-sxm", 1);
  p.max_num_batched_tokens = budget;
  double alone = closed_loop(&p, 1, 2000, 64, 4, 16).ttft_ms;
  double fixed = closed_loop(&p, 4, 2000, 64, 16, 400).ttft_ms;
  double spread = closed_loop_spread(&p, 4, 2000, 64, 0.2, 16, 400).ttft_ms;
  print_message("budget %zu: TTFT alone %.1f ms, at 4 fixed %.1f ms (%.2f P), spread %.1f ms "
                "(%.2f P): fixed/spread %.2f, llama-server %.2f\n",
                budget, alone, fixed, fixed / alone, spread, spread / alone, fixed / spread,
                llama_ratio);
  char what[80];
  snprintf(what, sizeof what, "budget %zu: TTFT fixed / spread lengths", budget);
  within(fixed / spread, llama_ratio, 0.25, what);
}

static void test_fixed_length_convoy_as_llama_server(void **state) {
  (void)state;
  convoy_check(2100, 1.73);
  convoy_check(8192, 2.78);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nim_llama70b_fp8_tp2_h100_5000_500),
      cmocka_unit_test(test_vllm_latency_bench_gpu_ratios),
      cmocka_unit_test(test_fixed_length_convoy_as_llama_server),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
