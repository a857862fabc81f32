/*
 * sha256.c - SHA-256 of a file (OpenSSL's libcrypto, opened on first use: crypto_api.h),
 * for the manifest's dataset fingerprints: two runs used the same data when these match.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibench/results.h"
#include "util/crypto_api.h"

cb_status cb_results_sha256_file(const char *path, char hex[65], cb_error *err) {
  cb_status loaded = cb__crypto_load(err);
  if (loaded != CB_OK) return loaded;
  /* The data was read once already: a FIFO, a terminal or a socket cannot be read again
   * (opening a FIFO would wait for a writer that never comes), so only a regular file
   * is hashed. O_NONBLOCK makes the open itself return at once whatever the path is. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return cb_error_at(err, CB_ERR_INVALID, path, 0, 0,
                       "not a regular file: it could be read only once, so it has no SHA-256");
  }
  EVP_MD_CTX *ctx = cb__crypto.EVP_MD_CTX_new();
  cb__crypto.EVP_DigestInit_ex(ctx, cb__crypto.EVP_sha256(), NULL);
  unsigned char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) cb__crypto.EVP_DigestUpdate(ctx, buf, (size_t)n);
  int read_errno = n < 0 ? errno : 0;
  close(fd);
  unsigned char md[32];
  unsigned int len = 0;
  cb__crypto.EVP_DigestFinal_ex(ctx, md, &len);
  cb__crypto.EVP_MD_CTX_free(ctx);
  if (read_errno) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "read failed: %s", strerror(read_errno));
  for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  return CB_OK;
}
