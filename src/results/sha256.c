/*
 * sha256.c - SHA-256 of a file (OpenSSL's libcrypto), for the manifest's dataset
 * fingerprints: two runs used the same data when these match.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "calibench/results.h"

cb_status cb_results_sha256_file(const char *path, char hex[65], cb_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
  unsigned char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) EVP_DigestUpdate(ctx, buf, n);
  int bad = ferror(f);
  fclose(f);
  unsigned char md[32];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  if (bad) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "read failed");
  for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  return CB_OK;
}
