/*
 * fuzz_memfile.h - an input as a file, for drivers whose reader takes a path: an
 * anonymous memory file (memfd) named /proc/self/fd/N, so nothing touches the disk.
 */
#ifndef CALIBENCH_FUZZ_MEMFILE_H
#define CALIBENCH_FUZZ_MEMFILE_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

typedef struct memfile {
  int fd;
  char path[48];
} memfile;

static inline void memfile_open(memfile *m, const void *data, size_t size) {
  m->fd = memfd_create("fuzz-input", 0);
  check(m->fd >= 0);
  const char *p = data;
  for (size_t off = 0; off < size;) {
    ssize_t w = write(m->fd, p + off, size - off);
    check(w > 0);
    off += (size_t)w;
  }
  snprintf(m->path, sizeof m->path, "/proc/self/fd/%d", m->fd);
}

static inline void memfile_close(memfile *m) { close(m->fd); }

#endif
