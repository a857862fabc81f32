/*
 * image_synth.c - synthetic PNG and JPEG images for vision-language workloads,
 * deterministic per seed (workload.h, cb_image_synth), written with libpng and
 * libjpeg(-turbo) into memory.
 */
/* jpeglib.h needs FILE and size_t declared before it. */
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>
#include <png.h>
#include <string.h>
#include <strings.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/workload.h"

cb_status cb_image_format_parse(const char *s, cb_image_format *out, cb_error *err) {
  if (s && !strcasecmp(s, "png")) *out = CB_IMAGE_PNG;
  else if (s && (!strcasecmp(s, "jpeg") || !strcasecmp(s, "jpg"))) *out = CB_IMAGE_JPEG;
  else return cb_error_set(err, CB_ERR_INVALID, "expected png or jpeg, got '%s'", s ? s : "");
  return CB_OK;
}

const char *cb_image_format_name(cb_image_format f) {
  return f == CB_IMAGE_JPEG ? "jpeg" : "png";
}

cb_status cb_image_size_parse(const char *s, uint32_t *width, uint32_t *height, cb_error *err) {
  unsigned long w = 0, h = 0;
  int used = 0;
  if (!s || sscanf(s, "%lux%lu%n", &w, &h, &used) != 2 || s[used] != '\0' || s[0] == '-' ||
      strchr(s, '-'))
    return cb_error_set(err, CB_ERR_INVALID, "expected WIDTHxHEIGHT (e.g. 640x480), got '%s'",
                        s ? s : "");
  if (w < 1 || h < 1 || w > CB_IMAGE_MAX_SIDE || h > CB_IMAGE_MAX_SIDE)
    return cb_error_set(err, CB_ERR_RANGE, "%lux%lu: each side must be in [1, %d]", w, h,
                        CB_IMAGE_MAX_SIDE);
  *width = (uint32_t)w;
  *height = (uint32_t)h;
  return CB_OK;
}

/* Rows of RGB pixels: a gradient between two colours drawn from the seed, plus noise
 * of ±16 per channel. */
static unsigned char *pixels(uint32_t w, uint32_t h, uint64_t seed) {
  cb_rng rng;
  cb_rng_init(&rng, seed);
  double c0[3], c1[3];
  for (int k = 0; k < 3; k++) c0[k] = (double)cb_rng_below(&rng, 256);
  for (int k = 0; k < 3; k++) c1[k] = (double)cb_rng_below(&rng, 256);
  unsigned char *px = cb_malloc((size_t)w * h * 3);
  for (uint32_t y = 0; y < h; y++) {
    for (uint32_t x = 0; x < w; x++) {
      double t = (double)(x + y) / (double)(w + h);
      for (int k = 0; k < 3; k++) {
        double v = c0[k] + (c1[k] - c0[k]) * t + (double)cb_rng_below(&rng, 33) - 16.0;
        px[((size_t)y * w + x) * 3 + (size_t)k] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
  }
  return px;
}

typedef struct png_sink {
  cb_buf *out;
  char msg[200];
  jmp_buf jmp;
} png_sink;

static void png_write_to_buf(png_structp png, png_bytep data, size_t n) {
  png_sink *s = png_get_io_ptr(png);
  cb_buf_append(s->out, data, n);
}

static void png_flush_none(png_structp png) { (void)png; }

static void png_fail(png_structp png, png_const_charp msg) {
  png_sink *s = png_get_error_ptr(png);
  snprintf(s->msg, sizeof s->msg, "%s", msg);
  longjmp(s->jmp, 1);
}

static void png_warn_none(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static cb_status write_png(const unsigned char *px, uint32_t w, uint32_t h, cb_buf *out,
                           cb_error *err) {
  /* volatile: read after longjmp */
  png_sink *volatile s = cb_calloc(1, sizeof *s);
  s->out = out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, s, png_fail, png_warn_none);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  cb_status st = CB_OK;
  if (!png || !info) {
    st = cb_error_set(err, CB_ERR_NOMEM, "libpng: cannot create the writer");
  } else if (setjmp(s->jmp)) {
    st = cb_error_set(err, CB_ERR_IO, "libpng: %s", s->msg);
  } else {
    png_set_write_fn(png, s, png_write_to_buf, png_flush_none);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++) png_write_row(png, px + (size_t)y * w * 3);
    png_write_end(png, NULL);
  }
  png_destroy_write_struct(&png, &info);
  cb_free(s);
  return st;
}

typedef struct jpeg_fail_ctx {
  struct jpeg_error_mgr mgr; /* first: libjpeg passes &mgr as the struct's err */
  jmp_buf jmp;
  unsigned char *mem;        /* jpeg_mem_dest's buffer, malloc'd by libjpeg */
  unsigned long mem_len;
} jpeg_fail_ctx;

static void jpeg_fail(j_common_ptr c) {
  longjmp(((jpeg_fail_ctx *)c->err)->jmp, 1);
}

static cb_status write_jpeg(const unsigned char *px, uint32_t w, uint32_t h, cb_buf *out,
                            cb_error *err) {
  struct jpeg_compress_struct c;
  jpeg_fail_ctx fc = {.mem = NULL};
  c.err = jpeg_std_error(&fc.mgr);
  fc.mgr.error_exit = jpeg_fail;
  if (setjmp(fc.jmp)) {
    char msg[JMSG_LENGTH_MAX];
    fc.mgr.format_message((j_common_ptr)&c, msg);
    jpeg_destroy_compress(&c);
    free(fc.mem);
    return cb_error_set(err, CB_ERR_IO, "libjpeg: %s", msg);
  }
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, &fc.mem, &fc.mem_len);
  c.image_width = w;
  c.image_height = h;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = (JSAMPROW)(px + (size_t)c.next_scanline * w * 3);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  cb_buf_append(out, fc.mem, fc.mem_len);
  jpeg_destroy_compress(&c);
  free(fc.mem);
  return CB_OK;
}

cb_status cb_image_synth(uint32_t width, uint32_t height, cb_image_format format,
                         uint64_t seed, cb_buf *out, cb_error *err) {
  if (width < 1 || height < 1 || width > CB_IMAGE_MAX_SIDE || height > CB_IMAGE_MAX_SIDE)
    return cb_error_set(err, CB_ERR_RANGE, "image %ux%u: each side must be in [1, %d]", width,
                        height, CB_IMAGE_MAX_SIDE);
  if (format != CB_IMAGE_PNG && format != CB_IMAGE_JPEG)
    return cb_error_set(err, CB_ERR_INVALID, "image format %d: expected png or jpeg", (int)format);
  unsigned char *px = pixels(width, height, seed);
  cb_status st = format == CB_IMAGE_PNG ? write_png(px, width, height, out, err)
                                        : write_jpeg(px, width, height, out, err);
  cb_free(px);
  return st;
}
