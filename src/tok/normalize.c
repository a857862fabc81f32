/*
 * normalize.c - the character-wise normalizers of tokenizer.json, as Hugging Face
 * tokenizers writes them (normalizers/utils.rs, strip.rs; NormalizedString's
 * lowercase, filter and strip):
 *   Lowercase      each character's char::to_lowercase (the UCD's simple mappings,
 *                  current Unicode, and U+0130 -> i U+0307 from SpecialCasing);
 *   StripAccents   every combining mark dropped (General_Category M of
 *                  unicode-normalization-alignments' tables: Unicode 9.0, nfc.c);
 *   Strip          White_Space removed from the left and/or right end;
 *   Nmt            SentencePiece's NMT cleanup (unicode.rs, do_nmt): ASCII and C1
 *                  controls but TAB, LF, FF, CR dropped, those four and a few
 *                  space-like characters turned into ' '.
 */
#include "tok_internal.h"
#include "util/unicode_lower.h"

void cb__lowercase(const char *s, size_t n, cb_buf *out) {
  char enc[4];
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = cb__utf8_decode((const unsigned char *)s + i, &len);
    i += len;
    if (cp == 0x130) cb_buf_append_str(out, "i\xCC\x87"); /* SpecialCasing: i + U+0307 */
    else cb_buf_append(out, enc, cb__utf8_encode(cp < 0x41 ? cp : cb__unicode_lower(cp), enc));
  }
  if (!out->data) cb_buf_append(out, "", 0);
}

void cb__strip_accents(const char *s, size_t n, cb_buf *out) {
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = cb__utf8_decode((const unsigned char *)s + i, &len);
    if (!cb__is_combining_mark(cp)) cb_buf_append(out, s + i, len);
    i += len;
  }
  if (!out->data) cb_buf_append(out, "", 0);
}

void cb__strip(const char *s, size_t n, int left, int right, cb_buf *out) {
  size_t a = 0, b = n, len;
  while (left && a < n && cb__is_white_space(cb__utf8_decode((const unsigned char *)s + a, &len)))
    a += len;
  while (right && b > a) {
    size_t c = b - 1;
    while (c > a && ((unsigned char)s[c] & 0xC0) == 0x80) c--;
    if (!cb__is_white_space(cb__utf8_decode((const unsigned char *)s + c, &len))) break;
    b = c;
  }
  cb_buf_append(out, s + a, b - a);
  if (!out->data) cb_buf_append(out, "", 0);
}

void cb__nmt(const char *s, size_t n, cb_buf *out) {
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = cb__utf8_decode((const unsigned char *)s + i, &len);
    int drop = (cp >= 0x01 && cp <= 0x08) || cp == 0x0B || (cp >= 0x0E && cp <= 0x1F) ||
               cp == 0x7F || cp == 0x8F || cp == 0x9F;
    int space = cp == 0x09 || cp == 0x0A || cp == 0x0C || cp == 0x0D || cp == 0x1680 ||
                (cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029 ||
                cp == 0x2581 || cp == 0xFEFF || cp == 0xFFFD;
    if (space) cb_buf_append_char(out, ' ');
    else if (!drop) cb_buf_append(out, s + i, len);
    i += len;
  }
  if (!out->data) cb_buf_append(out, "", 0);
}
