/*
 * test_workload_images.c - prompts with synthetic images: the body's messages hold the
 * text and N image_url parts whose data URLs decode to valid images of the asked size,
 * image_bytes counts their files, the same seed renders the same bytes, and datasets
 * whose prompts are already messages refuse images.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/workload.h"
#include "util/base64.h"
#include "util/image_header.h"

static cb_dataset *open_synthetic(uint32_t n, cb_image_format f) {
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  p.images_per_request = n;
  p.image_width = 100;
  p.image_height = 60;
  p.image_format = f;
  cb_dataset *ds = NULL;
  cb_error err;
  if (cb_dataset_open("synthetic", &p, NULL, 1, &ds, &err) != CB_OK) fail_msg("open: %s", err.msg);
  return ds;
}

static void render(const cb_dataset *ds, uint64_t seed, cb_workload_prompt *out) {
  memset(out, 0, sizeof *out);
  cb_error err;
  if (cb_dataset_render(ds, 0, 50, 8, seed, CB_NO_PREFIX, out, &err) != CB_OK)
    fail_msg("render: %s", err.msg);
}

static void check_parts(const cb_workload_prompt *pr, uint32_t n, cb__image_format want) {
  assert_int_equal(pr->text.len, 0);
  json_error_t je;
  json_t *msgs = json_loadb(pr->messages.data, pr->messages.len, 0, &je);
  if (!msgs) fail_msg("messages are not JSON: %s", je.text);
  json_t *content = json_object_get(json_array_get(msgs, 0), "content");
  assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "user");
  assert_int_equal(json_array_size(content), 1 + n);
  assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "type")), "text");
  assert_true(json_string_length(json_object_get(json_array_get(content, 0), "text")) > 0);
  uint64_t total = 0;
  for (uint32_t k = 1; k <= n; k++) {
    json_t *part = json_array_get(content, k);
    assert_string_equal(json_string_value(json_object_get(part, "type")), "image_url");
    const char *url = json_string_value(json_object_get(json_object_get(part, "image_url"), "url"));
    const char *prefix = want == CB__IMAGE_PNG ? "data:image/png;base64," : "data:image/jpeg;base64,";
    assert_non_null(url);
    assert_memory_equal(url, prefix, strlen(prefix));
    const char *b64 = url + strlen(prefix);
    unsigned char *bytes = malloc(3 * (strlen(b64) / 4 + 1));
    size_t nb = 0;
    assert_int_equal(cb__base64_decode(b64, strlen(b64), bytes, &nb), 0);
    cb__image_info info;
    char why[128];
    assert_int_equal(cb__image_header(bytes, nb, &info, why, sizeof why), 0);
    assert_int_equal(info.format, want);
    assert_int_equal(info.width, 100);
    assert_int_equal(info.height, 60);
    total += nb;
    free(bytes);
  }
  assert_int_equal(pr->num_images, n);
  assert_int_equal(pr->image_bytes, total);
  json_decref(msgs);
}

static void test_parts_and_bytes(void **state) {
  (void)state;
  cb_dataset *ds = open_synthetic(3, CB_IMAGE_PNG);
  cb_workload_prompt a, b, c;
  render(ds, 5, &a);
  render(ds, 5, &b);
  render(ds, 6, &c);
  check_parts(&a, 3, CB__IMAGE_PNG);
  /* Same seed, same body; another seed, other images. */
  assert_int_equal(a.messages.len, b.messages.len);
  assert_memory_equal(a.messages.data, b.messages.data, a.messages.len);
  assert_true(a.messages.len != c.messages.len || memcmp(a.messages.data, c.messages.data, a.messages.len));
  /* A prompt's images differ from each other (each from its own stream). */
  const char *first = strstr(a.messages.data, "base64,"), *second = strstr(first + 1, "base64,");
  assert_true(strncmp(first, second, 200) != 0);
  cb_workload_prompt_free(&a);
  cb_workload_prompt_free(&b);
  cb_workload_prompt_free(&c);
  cb_dataset_free(ds);
  ds = open_synthetic(1, CB_IMAGE_JPEG);
  render(ds, 5, &a);
  check_parts(&a, 1, CB__IMAGE_JPEG);
  cb_workload_prompt_free(&a);
  cb_dataset_free(ds);
  ds = open_synthetic(0, CB_IMAGE_PNG);
  render(ds, 5, &a);
  assert_int_equal(a.num_images, 0);
  assert_int_equal(a.image_bytes, 0);
  assert_int_equal(a.messages.len, 0);
  cb_workload_prompt_free(&a);
  cb_dataset_free(ds);
}

static void test_refused(void **state) {
  (void)state;
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  cb_dataset *ds = NULL;
  cb_error err;
  p.images_per_request = CB_IMAGE_MAX_PER_REQUEST + 1;
  assert_int_equal(cb_dataset_open("synthetic", &p, NULL, 1, &ds, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "images_per_request 65: at most 64"));
  p.images_per_request = 1;
  p.image_width = 9000;
  assert_int_equal(cb_dataset_open("synthetic", &p, NULL, 1, &ds, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "image size 9000x512: each side must be in [1, 8192]"));
  p.image_width = 64;
  char path[] = "/tmp/cb_chat_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *line = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n";
  assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
  close(fd);
  char spec[64];
  snprintf(spec, sizeof spec, "chat:%s", path);
  assert_int_equal(cb_dataset_open(spec, &p, NULL, 1, &ds, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "not with a chat dataset's messages"));
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parts_and_bytes),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
