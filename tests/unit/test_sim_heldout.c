/*
 * test_sim_heldout.c - the simulator's defaults against published measurements they
 * were NOT derived from (docs/simulator.md, "Held-out checks"). The defaults come
 * from three other figures (test_sim_physics.c); these runs check that the model
 * carries over to another model size, weight format, tensor parallelism, prompt
 * length and load.
 *
 * Each check runs the engine closed loop, as a benchmark client with a fixed
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

typedef struct loop_req {
  uint64_t sent_ns, first_ns, last_ns;
  int64_t tokens;
} loop_req;

typedef struct loop_run {
  loop_req *r;         /* [n_total] */
  size_t n_total;
  size_t n_finished_now; /* finished in the current advance() call */
  uint64_t count_from_ns;
  uint64_t tokens_after; /* tokens produced at or after count_from_ns */
} loop_run;

typedef struct loop_result {
  double ttft_ms;   /* mean over measured requests */
  double itl_ms;    /* mean gap between a request's tokens, over measured requests */
  double tput_tok_s; /* all output tokens in the measured window / its length */
} loop_result;

static void on_event(void *ctx, const cb_sim_event *ev) {
  loop_run *lr = ctx;
  loop_req *q = &lr->r[ev->request_id];
  if (ev->kind == CB_SIM_EV_TOKEN) {
    if (q->tokens == 0) q->first_ns = ev->time_ns;
    q->last_ns = ev->time_ns;
    q->tokens++;
    if (lr->count_from_ns && ev->time_ns >= lr->count_from_ns) lr->tokens_after++;
  } else if (ev->kind == CB_SIM_EV_FINISHED) {
    lr->n_finished_now++;
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

/* Closed loop at concurrency conc: the first warm requests are not measured (the
 * start, when all conc arrive at once, is not the steady state the tables report),
 * the next measured ones are. */
static loop_result closed_loop(const cb_sim_params *p, size_t conc, size_t isl, int64_t osl,
                               size_t warm, size_t measured) {
  cb_sim_engine *e;
  cb_error err;
  cb_error_clear(&err);
  if (cb_sim_engine_new(p, &e, &err) != CB_OK) fail_msg("engine: %s", err.msg);
  size_t total = warm + measured;
  loop_run lr = {.r = cb_calloc(total + conc, sizeof(loop_req)), .n_total = total};
  uint32_t *prompt = cb_malloc(isl * sizeof *prompt);
  size_t sent = 0;
  for (; sent < conc; sent++) send_request(e, &lr, sent, isl, osl, 0, prompt);
  size_t done = 0;
  for (;;) {
    uint64_t now = cb_sim_engine_next_event_ns(e);
    if (now == UINT64_MAX) break;
    lr.n_finished_now = 0;
    cb_sim_engine_advance(e, now, on_event, &lr);
    done += lr.n_finished_now;
    for (size_t k = 0; k < lr.n_finished_now && sent < total; k++, sent++) {
      if (sent == warm) lr.count_from_ns = now; /* the window opens with the first measured send */
      send_request(e, &lr, sent, isl, osl, now, prompt);
    }
    if (done >= total) break;
  }
  loop_result res = {0};
  uint64_t window_end = 0;
  for (size_t i = warm; i < total; i++) {
    const loop_req *q = &lr.r[i];
    assert_int_equal(q->tokens, osl);
    res.ttft_ms += (double)(q->first_ns - q->sent_ns) / 1e6;
    res.itl_ms += (double)(q->last_ns - q->first_ns) / (double)(osl - 1) / 1e6;
    if (q->last_ns > window_end) window_end = q->last_ns;
  }
  res.ttft_ms /= (double)measured;
  res.itl_ms /= (double)measured;
  res.tput_tok_s = (double)lr.tokens_after / ((double)(window_end - lr.count_from_ns) / 1e9);
  cb_free(prompt);
  cb_free(lr.r);
  cb_sim_engine_free(e);
  return res;
}

static void show(const char *what, const loop_result *r) {
  print_message("%s: TTFT %.2f ms, ITL %.2f ms, %.2f tok/s\n", what, r->ttft_ms, r->itl_ms,
                r->tput_tok_s);
}

static void within(double got, double published, double rel, const char *what) {
  double dev = (got - published) / published;
  if (fabs(dev) > rel)
    fail_msg("%s: simulated %.2f, published %.2f (%+.1f%%, tolerance ±%.0f%%)", what, got,
             published, dev * 100, rel * 100);
}

/*
 * NVIDIA NIM LLM benchmarking, "Performance", Llama-3.3-70b-instruct, NIM 1.8.0,
 * 2 x H100 80G, fp8, TP2, 5000 input / 500 output tokens
 * (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md):
 *   concurrency 1: TTFT 406.77 ms, ITL 18.58 ms, 51.67 tokens/s
 *   concurrency 5: TTFT 546.70 ms, ITL 21.83 ms, 218.48 tokens/s
 * Llama-3.3-70B has Llama-3.1-70B's architecture (the preset). FP8 weights, W8A8 on
 * the H100's FP8 tensor cores; KV cache left at bf16 (the table does not say).
 *
 * Tolerance ±15 %: the same table for the previous release (NIM 1.5.0, same GPUs and
 * settings) gives TTFT 368.11 / ITL 19.94 / 48.44 tok/s at concurrency 1 and ITL 23.89 /
 * 199.17 tok/s at 5, i.e. release-to-release spreads of 7–10 %; 15 % is that spread
 * with margin. At concurrency 5 only ITL and throughput are held: the TTFT there is
 * 1.5x the published one (docs/simulator.md explains why, and what it would take).
 */
static cb_sim_params nim_70b_fp8_tp2(void) {
  cb_sim_params p;
  cb_sim_default_params(&p);
  assert_int_equal(cb_sim_preset_model("llama-3.1-70b", &p.model, NULL), CB_OK);
  assert_int_equal(cb_sim_preset_gpu("h100-sxm", &p.gpu, NULL), CB_OK);
  cb_sim_params_apply_gpu_defaults(&p);
  p.tp = 2;
  p.weight_dtype = CB_SIM_DTYPE_FP8;
  return p;
}

static void test_nim_llama70b_fp8_tp2_h100_5000_500_conc1(void **state) {
  (void)state;
  cb_sim_params p = nim_70b_fp8_tp2();
  loop_result r = closed_loop(&p, 1, 5000, 500, 2, 6);
  show("NIM 70B fp8 TP2, 5000/500, conc 1", &r);
  within(r.ttft_ms, 406.77, 0.15, "conc 1 TTFT (ms)");
  within(r.itl_ms, 18.58, 0.15, "conc 1 ITL (ms)");
  within(r.tput_tok_s, 51.67, 0.15, "conc 1 throughput (tok/s)");
}

static void test_nim_llama70b_fp8_tp2_h100_5000_500_conc5(void **state) {
  (void)state;
  cb_sim_params p = nim_70b_fp8_tp2();
  loop_result r = closed_loop(&p, 5, 5000, 500, 10, 40);
  show("NIM 70B fp8 TP2, 5000/500, conc 5", &r);
  within(r.itl_ms, 21.83, 0.15, "conc 5 ITL (ms)");
  within(r.tput_tok_s, 218.48, 0.15, "conc 5 throughput (tok/s)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nim_llama70b_fp8_tp2_h100_5000_500_conc1),
      cmocka_unit_test(test_nim_llama70b_fp8_tp2_h100_5000_500_conc5),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
