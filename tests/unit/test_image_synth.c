/*
 * test_image_synth.c - synthetic images: same seed, same bytes; another seed, other
 * bytes; the PNG and JPEG files decode with libpng and libjpeg to the size asked for;
 * the size and format options refuse what they cannot make.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h> /* after stdio.h and stddef.h, which it needs */
#include <png.h>

#include <cmocka.h>

#include "calibench/workload.h"
#include "util/image_header.h"

static cb_buf synth(uint32_t w, uint32_t h, cb_image_format f, uint64_t seed) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_error err;
  if (cb_image_synth(w, h, f, seed, &b, &err) != CB_OK) fail_msg("synth: %s", err.msg);
  return b;
}

static void test_deterministic(void **state) {
  (void)state;
  for (int f = CB_IMAGE_PNG; f <= CB_IMAGE_JPEG; f++) {
    cb_buf a = synth(64, 48, (cb_image_format)f, 7), b = synth(64, 48, (cb_image_format)f, 7);
    cb_buf c = synth(64, 48, (cb_image_format)f, 8);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_true(a.len != c.len || memcmp(a.data, c.data, a.len) != 0);
    cb_buf_free(&a);
    cb_buf_free(&b);
    cb_buf_free(&c);
  }
}

/* Decode with libpng (the simplified API reads the whole file and checks its CRCs). */
static void test_png_decodes(void **state) {
  (void)state;
  cb_buf b = synth(33, 17, CB_IMAGE_PNG, 1);
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  assert_true(png_image_begin_read_from_memory(&img, b.data, b.len));
  assert_int_equal(img.width, 33);
  assert_int_equal(img.height, 17);
  img.format = PNG_FORMAT_RGB;
  unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
  assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
  /* Not a flat colour: the noise is there. */
  int differ = 0;
  for (size_t i = 3; i < PNG_IMAGE_SIZE(img); i++) differ |= px[i] != px[i % 3];
  assert_true(differ);
  free(px);
  cb__image_info info;
  char why[128];
  assert_int_equal(cb__image_header((unsigned char *)b.data, b.len, &info, why, sizeof why), 0);
  assert_int_equal(info.width, 33);
  assert_int_equal(info.height, 17);
  cb_buf_free(&b);
}

typedef struct jerr { struct jpeg_error_mgr mgr; jmp_buf jmp; } jerr;
static void jfail(j_common_ptr c) { longjmp(((jerr *)c->err)->jmp, 1); }

static void test_jpeg_decodes(void **state) {
  (void)state;
  cb_buf b = synth(40, 30, CB_IMAGE_JPEG, 1);
  struct jpeg_decompress_struct d;
  jerr je;
  d.err = jpeg_std_error(&je.mgr);
  je.mgr.error_exit = jfail;
  if (setjmp(je.jmp)) fail_msg("libjpeg could not decode the synthetic JPEG");
  jpeg_create_decompress(&d);
  jpeg_mem_src(&d, (unsigned char *)b.data, b.len);
  assert_int_equal(jpeg_read_header(&d, TRUE), JPEG_HEADER_OK);
  jpeg_start_decompress(&d);
  assert_int_equal(d.output_width, 40);
  assert_int_equal(d.output_height, 30);
  assert_int_equal(d.output_components, 3);
  unsigned char row[40 * 3];
  while (d.output_scanline < d.output_height) {
    JSAMPROW r = row;
    jpeg_read_scanlines(&d, &r, 1);
  }
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  cb__image_info info;
  char why[128];
  assert_int_equal(cb__image_header((unsigned char *)b.data, b.len, &info, why, sizeof why), 0);
  assert_int_equal(info.format, CB__IMAGE_JPEG);
  assert_int_equal(info.width, 40);
  assert_int_equal(info.height, 30);
  cb_buf_free(&b);
}

static void test_bad_options(void **state) {
  (void)state;
  uint32_t w, h;
  cb_error err;
  assert_int_equal(cb_image_size_parse("640x480", &w, &h, &err), CB_OK);
  assert_int_equal(w, 640);
  assert_int_equal(h, 480);
  static const char *const bad[] = {"640", "640x", "x480", "640x480x3", "-1x5", "0x10",
                                    "8193x10", "99999999999x1", "640X480 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (cb_image_size_parse(bad[i], &w, &h, &err) == CB_OK) fail_msg("'%s' was accepted", bad[i]);
  assert_int_equal(cb_image_size_parse("8193x10", &w, &h, &err), CB_ERR_RANGE);
  assert_non_null(strstr(err.msg, "each side must be in [1, 8192]"));
  cb_image_format f;
  assert_int_equal(cb_image_format_parse("JPG", &f, &err), CB_OK);
  assert_int_equal(f, CB_IMAGE_JPEG);
  assert_int_equal(cb_image_format_parse("gif", &f, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "expected png or jpeg, got 'gif'"));
  cb_buf b;
  cb_buf_init(&b, 0);
  assert_int_equal(cb_image_synth(0, 5, CB_IMAGE_PNG, 1, &b, &err), CB_ERR_RANGE);
  cb_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic), cmocka_unit_test(test_png_decodes),
      cmocka_unit_test(test_jpeg_decodes),  cmocka_unit_test(test_bad_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
