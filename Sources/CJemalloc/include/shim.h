// jemalloc (Debian libjemalloc-dev), linked into the server executable so that it replaces
// glibc's malloc for the whole process. Only its control call is declared here: jemalloc.h
// declares malloc and free again, which Swift then finds in two modules (this and Glibc).
// Debian builds jemalloc without a symbol prefix, so this is the library's own `mallctl`.
#include <stddef.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
