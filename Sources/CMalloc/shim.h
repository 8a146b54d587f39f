// glibc's malloc extensions: malloc_trim, for ReleasedMemory.
#include <malloc.h>
