#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <sys/time.h>

/*
 * hiredis 0.14.1 exposes some of what Swift needs only as macros or struct fields with
 * fixed-size char arrays. These inline functions give Swift one plain C call for each.
 */

/* The reader's error string (a macro in read.h). */
static inline const char *chiredis_reader_errstr(const redisReader *reader) {
    return reader->errstr;
}

/* The reader's error flag (0 when there is none). */
static inline int chiredis_reader_err(const redisReader *reader) {
    return reader->err;
}

/* The blocking context's error string; NULL when the context itself is NULL. */
static inline const char *chiredis_context_errstr(const redisContext *context) {
    return context == NULL ? "cannot allocate redis context" : context->errstr;
}

/* The blocking context's error flag; REDIS_ERR_OOM when the context itself is NULL. */
static inline int chiredis_context_err(const redisContext *context) {
    return context == NULL ? REDIS_ERR_OOM : context->err;
}

/* A timeval from milliseconds, for connect and command timeouts. */
static inline struct timeval chiredis_timeval_ms(long milliseconds) {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    return tv;
}

#endif
