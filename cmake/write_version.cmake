# Writes OUT (cb_version.h) with the version and the commit of the source tree SRC, at
# build time: the commit is read on every build, not once at configure, so a binary
# built after `git commit` (or checkout) names the commit it was built from. The file is
# rewritten only when its text changes, so an unchanged commit recompiles nothing.
# -DVERSION=x.y.z -DSRC=dir -DOUT=file [-DFALLBACK_COMMIT=hash] (a build outside a git
# checkout, the container image's, is told its commit with -DCB_COMMIT=...).
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT commit)
  set(commit "${FALLBACK_COMMIT}")
endif()
if(NOT commit)
  set(commit "unknown")
endif()
set(text "/* Generated at build time by cmake/write_version.cmake: the version and commit built. */
#define CB_VERSION_STRING \"${VERSION}\"
#define CB_GIT_COMMIT \"${commit}\"
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
