/*
 * image_header.c - PNG and JPEG dimensions from their headers.
 *
 * PNG (ISO/IEC 15948, section 5.2-5.3 and 11.2.2): an 8-byte signature, then the IHDR
 * chunk first: length 13, "IHDR", width and height as 4-byte big-endian integers.
 * JPEG (ITU-T T.81, annex B): SOI (FF D8), then marker segments FF xx with a 2-byte
 * big-endian length (that counts itself); the frame header SOFn (C0-CF except C4
 * DHT, C8 JPG, CC DAC) holds precision (1 byte), height, width (2 bytes each). A
 * height of 0 (defined later by a DNL marker) is refused: no encoder in use writes it.
 */
#include "util/image_header.h"

#include <stdio.h>
#include <string.h>

static int fail(char *why, size_t why_n, const char *msg) {
  snprintf(why, why_n, "%s", msg);
  return -1;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }

static int png_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                      size_t why_n) {
  if (n < 8 + 8 + 13) return fail(why, why_n, "PNG: IHDR truncated");
  if (be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4) != 0)
    return fail(why, why_n, "PNG: the first chunk is not a 13-byte IHDR");
  out->format = CB__IMAGE_PNG;
  out->width = be32(b + 16);
  out->height = be32(b + 20);
  /* The standard limits both to 2^31 - 1 and forbids 0. */
  if (out->width == 0 || out->height == 0 || out->width > 0x7fffffffu || out->height > 0x7fffffffu)
    return fail(why, why_n, "PNG: width and height must be in [1, 2^31-1]");
  return 0;
}

static int is_sof(unsigned m) {
  return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

static int jpeg_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                       size_t why_n) {
  size_t i = 2;
  while (i + 4 <= n) {
    if (b[i] != 0xFF) return fail(why, why_n, "JPEG: a marker segment does not start with FF");
    unsigned m = b[i + 1];
    if (m == 0xFF) { /* fill byte before a marker */
      i++;
      continue;
    }
    if (m == 0xD9 || m == 0xDA)
      return fail(why, why_n, "JPEG: no SOF marker before the image data");
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* stand-alone markers */
      i += 2;
      continue;
    }
    size_t len = be16(b + i + 2);
    if (len < 2) return fail(why, why_n, "JPEG: a marker segment's length is below 2");
    if (is_sof(m)) {
      if (len < 8 || i + 2 + 7 > n) return fail(why, why_n, "JPEG: SOF segment truncated");
      out->format = CB__IMAGE_JPEG;
      out->height = be16(b + i + 5);
      out->width = be16(b + i + 7);
      if (out->width == 0 || out->height == 0)
        return fail(why, why_n, "JPEG: width and height must be at least 1");
      return 0;
    }
    i += 2 + len;
  }
  return fail(why, why_n, "JPEG: truncated before its SOF marker");
}

int cb__image_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                     size_t why_n) {
  static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  memset(out, 0, sizeof *out);
  if (n >= 8 && memcmp(b, png_sig, 8) == 0) return png_header(b, n, out, why, why_n);
  if (n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return jpeg_header(b, n, out, why, why_n);
  char msg[96];
  int k = snprintf(msg, sizeof msg, "not a PNG or JPEG image (%zu bytes", n);
  if (n > 0) {
    k += snprintf(msg + k, sizeof msg - (size_t)k, ", starts with");
    for (size_t j = 0; j < n && j < 4; j++)
      k += snprintf(msg + k, sizeof msg - (size_t)k, " %02X", b[j]);
  }
  snprintf(msg + k, sizeof msg - (size_t)k, ")");
  return fail(why, why_n, msg);
}

const char *cb__image_format_name(cb__image_format f) {
  return f == CB__IMAGE_PNG ? "png" : f == CB__IMAGE_JPEG ? "jpeg" : "unknown";
}
