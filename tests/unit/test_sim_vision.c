/*
 * test_sim_vision.c - images in the simulator: Qwen2-VL's resize and token count
 * against values worked by hand from transformers' smart_resize, the encoder's FLOPs,
 * PNG/JPEG headers, image_url parts parsed into vision tokens (and refused with a
 * clear 400), and a request's TTFT growing with its images as the roofline predicts.
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
#include "calibench/buf.h"
#include "calibench/sim.h"
#include "sim/api.h"
#include "test_sim_common.h"
#include "util/base64.h"
#include "util/image_header.h"

static void close_to(double got, double want, double tol, const char *what) {
  if (!(fabs(got - want) <= tol)) fail_msg("%s: got %.17g, want %.17g (± %g)", what, got, want, tol);
}

static cb_sim_vision qwen(void) {
  cb_sim_vision v;
  assert_int_equal(cb_sim_vision_preset("qwen2-vl-7b", &v), 1);
  return v;
}

/* Expected values worked from smart_resize (image_processing_qwen2_vl.py), factor 28,
 * min_pixels 3136, max_pixels 12845056; tokens = (h'/28)·(w'/28). */
static void test_resize_and_tokens(void **state) {
  (void)state;
  cb_sim_vision v = qwen();
  static const struct { int64_t h, w, rh, rw, tokens; } cases[] = {
      {480, 640, 476, 644, 391},     /* 17.14 -> 17, 22.86 -> 23 */
      {28, 28, 56, 56, 4},           /* 784 px < min: β = 2, ceil */
      {1024, 1024, 1036, 1036, 1369},/* 36.57 -> 37 */
      {512, 512, 504, 504, 324},     /* 18.29 -> 18 */
      {42, 70, 56, 56, 4},           /* 1.5 -> 2 and 2.5 -> 2: Python rounds half to even */
      {6000, 8000, 3080, 4116, 16170},/* 48 Mpx > max: β = sqrt(48e6/12845056), floor */
      {1, 200, 28, 812, 29},         /* ratio exactly 200 is accepted; round(1/28) = 0 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t rh = 0, rw = 0;
    assert_int_equal(cb_sim_vision_resize(&v, cases[i].h, cases[i].w, &rh, &rw, NULL), CB_OK);
    if (rh != cases[i].rh || rw != cases[i].rw || cb_sim_vision_tokens(&v, rh, rw) != cases[i].tokens)
      fail_msg("%lldx%lld (h x w): got %lldx%lld, %lld tokens; want %lldx%lld, %lld",
               (long long)cases[i].h, (long long)cases[i].w, (long long)rh, (long long)rw,
               (long long)cb_sim_vision_tokens(&v, rh, rw), (long long)cases[i].rh,
               (long long)cases[i].rw, (long long)cases[i].tokens);
  }
  cb_error err;
  int64_t rh, rw;
  assert_int_equal(cb_sim_vision_resize(&v, 1, 201, &rh, &rw, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "aspect ratio must be smaller than 200"));
  assert_int_equal(cb_sim_vision_resize(&v, 0, 10, &rh, &rw, &err), CB_ERR_INVALID);
  cb_sim_vision none;
  assert_int_equal(cb_sim_vision_preset("llama-3.1-8b", &none), 0);
}

/* 448x448: 1024 patches, 256 tokens. By hand: patch embedding 2·(3·2·14²·1280)·1024 =
 * 3,082,813,440; 32 blocks of 2·(4·1280² + 2·1280·5120)·1024 + 4·1280·1024² =
 * 45,634,027,520; merger 2·(5120² + 5120·3584)·256 = 22,817,013,760. */
static void test_encoder_flops(void **state) {
  (void)state;
  cb_sim_vision v = qwen();
  double want = 3082813440.0 + 32.0 * 45634027520.0 + 22817013760.0;
  close_to(cb_sim_vision_encoder_flops(&v, 448, 448), want, want * 1e-12, "448x448");
  /* Attention is quadratic in the patches: 4x the pixels costs more than 4x. */
  assert_true(cb_sim_vision_encoder_flops(&v, 896, 896) > 4.0 * want);
}

/* A PNG's first 33 bytes: signature, IHDR (w, h, depth 8, RGB), CRC (not checked). */
static size_t png_head(unsigned char *b, uint32_t w, uint32_t h) {
  static const unsigned char sig[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n',
                                      0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  memcpy(b, sig, sizeof sig);
  for (int i = 0; i < 4; i++) {
    b[16 + i] = (unsigned char)(w >> (24 - 8 * i));
    b[20 + i] = (unsigned char)(h >> (24 - 8 * i));
  }
  b[24] = 8, b[25] = 2, b[26] = b[27] = b[28] = 0;
  memset(b + 29, 0, 4);
  return 33;
}

/* A JPEG's SOI, an APP0 segment, then SOF0 (8-bit, h, w, 3 components). */
static size_t jpeg_head(unsigned char *b, uint16_t w, uint16_t h) {
  size_t n = 0;
  b[n++] = 0xFF, b[n++] = 0xD8;
  b[n++] = 0xFF, b[n++] = 0xE0, b[n++] = 0, b[n++] = 4, b[n++] = 'J', b[n++] = 'F';
  b[n++] = 0xFF, b[n++] = 0xC0, b[n++] = 0, b[n++] = 17, b[n++] = 8;
  b[n++] = (unsigned char)(h >> 8), b[n++] = (unsigned char)h;
  b[n++] = (unsigned char)(w >> 8), b[n++] = (unsigned char)w;
  memset(b + n, 0, 10);
  return n + 10;
}

/* The header of b[0..n) reads as an image of `format`, width x height. */
static void header_is(const unsigned char *b, size_t n, cb__image_format format, uint32_t width,
                      uint32_t height) {
  cb__image_info info;
  char why[128] = "";
  if (cb__image_header(b, n, &info, why, sizeof why) != 0)
    fail_msg("want %s %ux%u, refused: %s", cb__image_mime(format), width, height, why);
  if (info.format != format || info.width != width || info.height != height)
    fail_msg("want %s %ux%u, got %s %ux%u", cb__image_mime(format), width, height,
             cb__image_mime(info.format), info.width, info.height);
}

/* The header of b[0..n) is refused with a reason that holds `want`. */
static void header_refused(const unsigned char *b, size_t n, const char *want) {
  cb__image_info info;
  char why[128] = "";
  if (cb__image_header(b, n, &info, why, sizeof why) != -1 || !strstr(why, want))
    fail_msg("want a refusal saying '%s', got '%s'", want, why);
}

static void test_image_header(void **state) {
  (void)state;
  unsigned char b[64];
  header_is(b, png_head(b, 640, 480), CB__IMAGE_PNG, 640, 480);
  header_refused(b, 20, "IHDR truncated");
  header_is(b, jpeg_head(b, 300, 200), CB__IMAGE_JPEG, 300, 200);
  header_refused(b, 8, "JPEG: truncated");
  header_refused((const unsigned char *)"GIF89a", 6, "GIF: logical screen descriptor truncated");
  /* GIF: the logical screen, 16-bit little-endian */
  static const unsigned char gif[] = {'G', 'I', 'F', '8', '9', 'a', 0x40, 0x01, 0xC8, 0x00, 0, 0, 0};
  header_is(gif, sizeof gif, CB__IMAGE_GIF, 320, 200);
  assert_string_equal(cb__image_mime(CB__IMAGE_GIF), "image/gif");
  /* WebP: lossless (VP8L: 14-bit width-1, height-1), lossy (VP8 : after the start code),
   * extended (VP8X: 24-bit canvas width-1, height-1) */
  unsigned char w[32] = "RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00";
  uint32_t v = 55u | 83u << 14 | 1u << 28;
  w[20] = 0x2F;
  for (int k = 0; k < 4; k++) w[21 + k] = (unsigned char)(v >> 8 * k);
  header_is(w, 30, CB__IMAGE_WEBP, 56, 84);
  memcpy(w + 12, "VP8 ", 4);
  memset(w + 20, 0, 12);
  w[23] = 0x9D, w[24] = 0x01, w[25] = 0x2A;
  w[26] = 0x80, w[27] = 0x02 | 0x40; /* 640, the top two bits a scale */
  w[28] = 0xE0, w[29] = 0x01;        /* 480 */
  header_is(w, 30, CB__IMAGE_WEBP, 640, 480);
  w[24] = 0x02;
  header_refused(w, 30, "WebP: VP8 start code missing");
  memcpy(w + 12, "VP8X", 4);
  memset(w + 20, 0, 12);
  w[24] = 0xE7, w[25] = 0x03;        /* 1000 - 1 */
  w[27] = 0xCF, w[28] = 0x07;        /* 2000 - 1 */
  header_is(w, 30, CB__IMAGE_WEBP, 1000, 2000);
  assert_string_equal(cb__image_mime(CB__IMAGE_WEBP), "image/webp");
  header_refused(w, 20, "WebP: header truncated");
  header_refused((const unsigned char *)"BM6\0\0\0", 6,
                 "not a PNG, JPEG, WebP or GIF image (6 bytes, starts with 42 4D 36 00)");
}

static const cb__sim_tokens *vision_tokens(void) {
  static cb__sim_tokens t = {.tok = NULL, .vocab = 152064};
  t.has_vision = cb_sim_vision_preset("qwen2-vl-7b", &t.vision);
  return &t;
}

/* A chat body with `n` copies of an image part for bytes b[0..len). */
static char *chat_with_images(const unsigned char *b, size_t len, int n, const char *mime) {
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_buf_append_str(&out, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                          "\"text\":\"Describe the pictures.\"}");
  for (int i = 0; i < n; i++) {
    cb_buf_appendf(&out, ",{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:%s;base64,", mime);
    cb__base64_encode(b, len, &out);
    cb_buf_append_str(&out, "\"}}");
  }
  cb_buf_append_str(&out, "]}],\"max_tokens\":1}");
  return out.data; /* owned by the caller (cb_free) */
}

static void test_parse_image_parts(void **state) {
  (void)state;
  unsigned char b[64];
  size_t n = png_head(b, 448, 448);
  cb__sim_api_request r0, r2;
  cb__sim_api_error e;
  char *body0 = chat_with_images(b, n, 0, "image/png"), *body2 = chat_with_images(b, n, 2, "image/png");
  assert_int_equal(cb__sim_api_parse(CB__SIM_API_CHAT, body0, strlen(body0), vision_tokens(), &r0, &e), CB_OK);
  assert_int_equal(cb__sim_api_parse(CB__SIM_API_CHAT, body2, strlen(body2), vision_tokens(), &r2, &e), CB_OK);
  assert_int_equal(r0.num_images, 0);
  assert_int_equal(r2.num_images, 2);
  assert_int_equal(r2.image_tokens, 2 * 256);
  /* The text is tokenized in two pieces around the images: the split may cost one. */
  assert_in_range(r2.prompt_len - 2 * 256, r0.prompt_len, r0.prompt_len + 1);
  cb_sim_vision v = qwen();
  close_to(r2.encoder_flops, 2 * cb_sim_vision_encoder_flops(&v, 448, 448), 1.0, "2 images");
  /* The same image gives the same vision ids (prefix caching sees it as the same). */
  const char *tail = "<|end|>\n<|assistant|>\n"; /* the template after the images */
  size_t first = r2.prompt_len - cb_tok_approx_tokenize(tail, strlen(tail), 152064, NULL, 0) - 512;
  assert_memory_equal(r2.prompt_ids + first, r2.prompt_ids + first + 256, 256 * sizeof(uint32_t));
  assert_string_equal(r2.match_key, "Describe the pictures.");
  cb__sim_api_request_free(&r0);
  cb__sim_api_request_free(&r2);
  cb_free(body0);
  cb_free(body2);
}

static void expect_400(const char *body, const cb__sim_tokens *t, const char *fragment) {
  cb__sim_api_request r;
  cb__sim_api_error e;
  memset(&e, 0, sizeof e);
  if (cb__sim_api_parse(CB__SIM_API_CHAT, body, strlen(body), t, &r, &e) == CB_OK)
    fail_msg("accepted: %.200s", body);
  if (e.status != 400 || strcmp(e.param, "messages") || !strstr(e.message, fragment))
    fail_msg("got %d '%s' '%s', want 400 'messages' containing '%s'", e.status, e.param,
             e.message, fragment);
}

static void test_bad_images(void **state) {
  (void)state;
  unsigned char b[64];
  size_t n = png_head(b, 448, 448);
  char *body = chat_with_images(b, n, 1, "image/png");
  static const cb__sim_tokens text_only = {.tok = NULL, .vocab = 128256};
  expect_400(body, &text_only, "this model does not accept images");
  cb_free(body);
  body = chat_with_images((const unsigned char *)"BM6.......", 10, 1, "image/bmp");
  expect_400(body, vision_tokens(), "invalid image: not a PNG, JPEG, WebP or GIF image");
  cb_free(body);
  n = png_head(b, 70000, 100);
  body = chat_with_images(b, n, 1, "image/png");
  expect_400(body, vision_tokens(), "image 70000x100: a side is above 65535 pixels");
  cb_free(body);
  n = png_head(b, 4020, 20);
  body = chat_with_images(b, n, 1, "image/png");
  expect_400(body, vision_tokens(), "aspect ratio must be smaller than 200");
  cb_free(body);
  expect_400("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
             "{\"url\":\"http://127.0.0.1/a.png\"}}]}]}", vision_tokens(), "only data: URLs");
  expect_400("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
             "{\"url\":\"data:image/png;base64,@@@@\"}}]}]}", vision_tokens(), "invalid base64");
  expect_400("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
             "{\"url\":\"data:image/png,abc\"}}]}]}", vision_tokens(), "is not base64");
  expect_400("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}",
             vision_tokens(), "must be an object with a string 'url'");
}

typedef struct ttft_ctx { uint64_t first_ns; } ttft_ctx;
static void on_event(void *ctx, const cb_sim_event *ev) {
  ttft_ctx *c = ctx;
  if (ev->kind == CB_SIM_EV_TOKEN && c->first_ns == 0) c->first_ns = ev->time_ns;
}

/* One request with k images of 448x448 on an idle engine: its TTFT is one prefill step,
 * and that step is the roofline's cost of the prompt plus the encoder. */
static void test_ttft_grows_with_images(void **state) {
  (void)state;
  cb_sim_params p = sim_preset("qwen2-vl-7b", "h100-sxm", 1);
  unsigned char b[64];
  size_t n = png_head(b, 448, 448);
  double prev = 0;
  for (int k = 0; k <= 4; k++) {
    char *body = chat_with_images(b, n, k, "image/png");
    cb__sim_api_request r;
    cb__sim_api_error e;
    assert_int_equal(cb__sim_api_parse(CB__SIM_API_CHAT, body, strlen(body), vision_tokens(), &r, &e), CB_OK);
    cb_sim_engine *eng;
    assert_int_equal(cb_sim_engine_new(&p, &eng, NULL), CB_OK);
    cb_sim_request er = {.id = 1, .prompt_ids = r.prompt_ids, .prompt_len = r.prompt_len,
                         .output_len = 1, .output_seed = 7, .encoder_flops = r.encoder_flops};
    assert_int_equal(cb_sim_engine_add(eng, &er, 0, NULL), CB_OK);
    ttft_ctx c = {0};
    while (c.first_ns == 0) cb_sim_engine_advance(eng, cb_sim_engine_next_event_ns(eng), on_event, &c);
    cb_sim_batch_item item = {.new_tokens = (int64_t)r.prompt_len, .context_tokens = 0,
                              .samples = 1, .encoder_flops = r.encoder_flops};
    cb_sim_step_cost cost;
    cb_sim_step_cost_compute(&p, &item, 1, &cost);
    /* The first step carries the warm-up factor when warm-up is on (off by default). */
    close_to((double)c.first_ns, cost.total_ns, 1.0, "TTFT");
    if (k > 0) assert_true((double)c.first_ns > prev);
    /* Without the encoder's cost the same prompt would be faster by its FLOPs' time. */
    if (k > 0) {
      item.encoder_flops = 0;
      cb_sim_step_cost text_only;
      cb_sim_step_cost_compute(&p, &item, 1, &text_only);
      double enc_ns = r.encoder_flops / (p.gpu.flops_bf16 * p.mfu) * 1e9;
      close_to(cost.compute_ns - text_only.compute_ns, enc_ns, enc_ns * 1e-9, "encoder ns");
    }
    prev = (double)c.first_ns;
    cb_sim_engine_free(eng);
    cb__sim_api_request_free(&r);
    cb_free(body);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resize_and_tokens), cmocka_unit_test(test_encoder_flops),
      cmocka_unit_test(test_image_header),      cmocka_unit_test(test_parse_image_parts),
      cmocka_unit_test(test_bad_images),        cmocka_unit_test(test_ttft_grows_with_images),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
