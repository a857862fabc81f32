/*
 * image_header.c - PNG, JPEG, WebP and GIF dimensions from their headers (WebP and
 * GIF: at their parsers below).
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

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le24(const unsigned char *p) { return le16(p) | (uint32_t)p[2] << 16; }
static uint32_t le32(const unsigned char *p) { return le24(p) | (uint32_t)p[3] << 24; }

/* WebP (RFC 9649): "RIFF" size "WEBP", then the first chunk: "VP8 " (lossy: a 3-byte
 * frame tag, the start code 9D 01 2A, 14-bit width and height, RFC 6386 section 9.1),
 * "VP8L" (lossless: signature 2F, then width-1 and height-1 in 14 bits each, RFC 9649
 * section 3.2.1) or "VP8X" (extended: canvas width-1 and height-1 in 24 bits each at
 * payload offsets 4 and 7, section 2.7). */
static int webp_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                       size_t why_n) {
  if (n < 30) return fail(why, why_n, "WebP: header truncated");
  const unsigned char *chunk = b + 12, *payload = b + 20;
  out->format = CB__IMAGE_WEBP;
  if (!memcmp(chunk, "VP8 ", 4)) {
    if (payload[3] != 0x9D || payload[4] != 0x01 || payload[5] != 0x2A)
      return fail(why, why_n, "WebP: VP8 start code missing");
    out->width = le16(payload + 6) & 0x3FFF;
    out->height = le16(payload + 8) & 0x3FFF;
  } else if (!memcmp(chunk, "VP8L", 4)) {
    if (payload[0] != 0x2F) return fail(why, why_n, "WebP: VP8L signature missing");
    uint32_t v = le32(payload + 1);
    out->width = (v & 0x3FFF) + 1;
    out->height = (v >> 14 & 0x3FFF) + 1;
  } else if (!memcmp(chunk, "VP8X", 4)) {
    out->width = le24(payload + 4) + 1;
    out->height = le24(payload + 7) + 1;
  } else {
    return fail(why, why_n, "WebP: the first chunk is not VP8, VP8L or VP8X");
  }
  if (!out->width || !out->height) return fail(why, why_n, "WebP: width and height must be at least 1");
  return 0;
}

/* GIF (GIF89a specification, section 18): "GIF87a" or "GIF89a", then the logical
 * screen's width and height, 16 bits each, little-endian. */
static int gif_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                      size_t why_n) {
  if (n < 10) return fail(why, why_n, "GIF: logical screen descriptor truncated");
  out->format = CB__IMAGE_GIF;
  out->width = le16(b + 6);
  out->height = le16(b + 8);
  if (!out->width || !out->height) return fail(why, why_n, "GIF: width and height must be at least 1");
  return 0;
}

int cb__image_header(const unsigned char *b, size_t n, cb__image_info *out, char *why,
                     size_t why_n) {
  static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  memset(out, 0, sizeof *out);
  if (n >= 8 && memcmp(b, png_sig, 8) == 0) return png_header(b, n, out, why, why_n);
  if (n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return jpeg_header(b, n, out, why, why_n);
  if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4)) return webp_header(b, n, out, why, why_n);
  if (n >= 6 && (!memcmp(b, "GIF87a", 6) || !memcmp(b, "GIF89a", 6))) return gif_header(b, n, out, why, why_n);
  char msg[112];
  int k = snprintf(msg, sizeof msg, "not a PNG, JPEG, WebP or GIF image (%zu bytes", n);
  if (n > 0) {
    k += snprintf(msg + k, sizeof msg - (size_t)k, ", starts with");
    for (size_t j = 0; j < n && j < 4; j++)
      k += snprintf(msg + k, sizeof msg - (size_t)k, " %02X", b[j]);
  }
  snprintf(msg + k, sizeof msg - (size_t)k, ")");
  return fail(why, why_n, msg);
}

const char *cb__image_format_name(cb__image_format f) {
  switch (f) {
    case CB__IMAGE_PNG: return "png";
    case CB__IMAGE_JPEG: return "jpeg";
    case CB__IMAGE_WEBP: return "webp";
    case CB__IMAGE_GIF: return "gif";
  }
  return "unknown";
}

const char *cb__image_mime(cb__image_format f) {
  switch (f) {
    case CB__IMAGE_PNG: return "image/png";
    case CB__IMAGE_JPEG: return "image/jpeg";
    case CB__IMAGE_WEBP: return "image/webp";
    case CB__IMAGE_GIF: return "image/gif";
  }
  return "application/octet-stream";
}
