/*
 * test_tok_nfc_conformance.c - cb__nfc, cb__nfd, cb__nfkc and cb__nfkd against
 * Unicode's own conformance file,
 * NormalizationTest.txt (UAX #15 section 17), from Debian's unicode-data package
 * (/usr/share/unicode, or $CB_UCD_DIR).
 *
 * The tables are Unicode 9.0's, the version Hugging Face tokenizers normalizes as
 * (scripts/gen_nfc_data.py says how that was established), and the file is a later
 * version's: lines holding a character assigned after 9.0 are left out, using
 * DerivedAge.txt. Every other line must hold the file's invariants: c2 == NFC(c1) ==
 * NFC(c2) == NFC(c3) and c4 == NFC(c4) == NFC(c5); c3 == NFD(c1..c3), c5 == NFD(c4..c5);
 * c4 == NFKC(c1..c5); c5 == NFKD(c1..c5). Every 9.0 character that Part 1 does not
 * list is its own NFC, NFD, NFKC and NFKD; and the quick check never calls text NFC
 * that NFC would change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tok/tok_internal.h"

#define MAX_AGE_MAJOR 9
#define NCP 0x110000

static const char *ucd_dir(void) {
  const char *d = getenv("CB_UCD_DIR");
  return d && *d ? d : "/usr/share/unicode";
}

/* assigned[cp]: assigned in Unicode 9.0 or earlier (DerivedAge.txt). */
static unsigned char *load_assigned(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/DerivedAge.txt", ucd_dir());
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("%s: cannot open (Debian package unicode-data)", path);
  unsigned char *assigned = calloc(NCP, 1);
  char line[512];
  unsigned first, last, major, minor;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "%x..%x ; %u.%u", &first, &last, &major, &minor) == 4 ||
        (sscanf(line, "%x ; %u.%u", &first, &major, &minor) == 3 && (last = first, 1))) {
      if (major <= MAX_AGE_MAJOR && last < NCP)
        for (unsigned cp = first; cp <= last; cp++) assigned[cp] = 1;
    }
  }
  fclose(f);
  return assigned;
}

/* The conformance file, decompressed when Debian ships it compressed. */
static FILE *open_tests(int *piped) {
  char path[512], cmd[600];
  snprintf(path, sizeof path, "%s/NormalizationTest.txt", ucd_dir());
  FILE *f = fopen(path, "r");
  *piped = 0;
  if (f) return f;
  snprintf(cmd, sizeof cmd, "bzip2 -dc '%s.bz2'", path);
  f = popen(cmd, "r");
  if (!f) fail_msg("%s(.bz2): cannot open (Debian packages unicode-data, bzip2)", path);
  *piped = 1;
  return f;
}

/* One column ("1E0A 0323") as UTF-8; 0 when it holds a character after 9.0. */
static int column_utf8(const char *col, const unsigned char *assigned, cb_buf *out) {
  cb_buf_reset(out);
  char *end;
  for (const char *p = col;;) {
    unsigned long cp = strtoul(p, &end, 16);
    if (end == p) break;
    if (cp >= NCP || !assigned[cp]) return 0;
    char enc[4];
    cb_buf_append(out, enc, cb__utf8_encode((uint32_t)cp, enc));
    p = end;
  }
  if (!out->data) cb_buf_append(out, "", 0);
  return 1;
}

typedef void (*form_fn)(const char *s, size_t n, cb_buf *out);
static const struct {
  const char *name;
  form_fn fn;
} forms[] = {{"NFC", cb__nfc}, {"NFD", cb__nfd}, {"NFKC", cb__nfkc}, {"NFKD", cb__nfkd}};
enum { NFC, NFD, NFKC, NFKD };

static void expect_form(int form, const char *line, int from, int to, const cb_buf *in,
                        const cb_buf *want) {
  cb_buf got;
  cb_buf_init(&got, 0);
  forms[form].fn(in->data, in->len, &got);
  if (got.len != want->len || memcmp(got.data, want->data, got.len))
    fail_msg("%s(c%d) != c%d on: %s", forms[form].name, from, to, line);
  if (form == NFC && cb__nfc_quick_yes(in->data, in->len) &&
      (in->len != want->len || memcmp(in->data, want->data, in->len)))
    fail_msg("quick check says c%d is NFC, but NFC changes it: %s", from, line);
  cb_buf_free(&got);
}

static void test_normalization_test_txt(void **state) {
  (void)state;
  unsigned char *assigned = load_assigned();
  unsigned char *in_part1 = calloc(NCP, 1);
  int piped;
  FILE *f = open_tests(&piped);
  cb_buf col[5];
  for (int i = 0; i < 5; i++) cb_buf_init(&col[i], 0);
  char line[4096];
  int part = -1;
  long checked = 0, later = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "@Part", 5)) {
      part = atoi(line + 5);
      continue;
    }
    if (line[0] == '#' || line[0] == '\n' || part < 0) continue;
    line[strcspn(line, "#\n")] = 0;
    char *fields[5], *save = NULL, *p = line;
    char copy[4096];
    strcpy(copy, line);
    int n = 0, ok = 1;
    for (char *t = strtok_r(copy, ";", &save); t && n < 5; t = strtok_r(NULL, ";", &save)) fields[n++] = t;
    assert_int_equal(n, 5);
    if (part == 1) {
      unsigned long cp = strtoul(fields[0], NULL, 16);
      if (cp < NCP) in_part1[cp] = 1;
    }
    for (int i = 0; i < 5 && ok; i++) ok = column_utf8(fields[i], assigned, &col[i]);
    if (!ok) {
      later++;
      continue;
    }
    for (int c = 1; c <= 5; c++) {
      expect_form(NFC, p, c, c <= 3 ? 2 : 4, &col[c - 1], &col[c <= 3 ? 1 : 3]);
      expect_form(NFD, p, c, c <= 3 ? 3 : 5, &col[c - 1], &col[c <= 3 ? 2 : 4]);
      expect_form(NFKC, p, c, 4, &col[c - 1], &col[3]);
      expect_form(NFKD, p, c, 5, &col[c - 1], &col[4]);
    }
    checked++;
  }
  int rc = piped ? pclose(f) : fclose(f);
  assert_int_equal(rc, 0);
  /* Unicode 15.0's file has 19,074 test lines, 18,288 of them within 9.0: a file
   * that lost its lines (or an age filter gone wrong) must not pass quietly. */
  fprintf(stderr, "NormalizationTest.txt: %ld lines checked, %ld with later characters\n", checked, later);
  assert_true(checked >= 15000);

  /* Part 1's rule: every character it does not list is its own NFC, NFD, NFKC, NFKD. */
  long invariant = 0;
  cb_buf one, got;
  cb_buf_init(&one, 0);
  cb_buf_init(&got, 0);
  for (uint32_t cp = 0; cp < NCP; cp++) {
    if (!assigned[cp] || in_part1[cp] || (cp >= 0xD800 && cp < 0xE000)) continue;
    char enc[4];
    cb_buf_reset(&one);
    cb_buf_append(&one, enc, cb__utf8_encode(cp, enc));
    for (int form = 0; form < 4; form++) {
      cb_buf_reset(&got);
      forms[form].fn(one.data, one.len, &got);
      if (got.len != one.len || memcmp(got.data, one.data, one.len))
        fail_msg("%s(U+%04X) is not U+%04X", forms[form].name, cp, cp);
    }
    invariant++;
  }
  assert_true(invariant > 200000);
  cb_buf_free(&one);
  cb_buf_free(&got);
  for (int i = 0; i < 5; i++) cb_buf_free(&col[i]);
  free(in_part1);
  free(assigned);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_normalization_test_txt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
