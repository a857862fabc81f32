/*
 * image_header.h - the format and size of a PNG, JPEG, WebP or GIF image from its
 * header alone (no decoding), as the simulator needs them to count an image's vision
 * tokens and a dataset's image files need their MIME type.
 */
#ifndef CALIBENCH_UTIL_IMAGE_HEADER_H
#define CALIBENCH_UTIL_IMAGE_HEADER_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  CB__IMAGE_PNG = 1,
  CB__IMAGE_JPEG = 2,
  CB__IMAGE_WEBP = 3,
  CB__IMAGE_GIF = 4
} cb__image_format;

typedef struct cb__image_info {
  cb__image_format format;
  uint32_t width, height; /* pixels, both >= 1 */
} cb__image_info;

/* Reads b[0..n). Returns 0 and fills *out, or -1 with why[0..why_n) saying what is
 * wrong ("not a PNG, JPEG, WebP or GIF image (starts with 42 4D ...)", "PNG: IHDR truncated",
 * "JPEG: no SOF marker before the image data", a zero width ...). */
int cb__image_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                     size_t why_n);

const char *cb__image_format_name(cb__image_format f);
/* "image/png", "image/jpeg", "image/webp", "image/gif". */
const char *cb__image_mime(cb__image_format f);

#endif
