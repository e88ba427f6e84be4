/*
 * Text the workloads write for the transports and for Python, with its bounds checked: a
 * bounded printf-style append, PostgreSQL's text of an int[], tuples of str. A writer returns
 * -1 when the text does not fit its buffer; nothing is cut short silently.
 */
#ifndef OLTPLAB_TEXT_H
#define OLTPLAB_TEXT_H

#include "workload.h"

/* Append to buf (size bytes, *at of them used): 0, or -1 when it would not fit (*at is then
 * unchanged and buf holds a NUL-terminated prefix of the text). */
int text_put(char *buf, size_t size, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* PostgreSQL's text of the int[] of v[0..n-1], {v1,v2,...}, into buf (size bytes): 0, or -1
 * when it does not fit. */
int text_int_array(char *buf, size_t size, const int32_t *v, int n);

/* A decimal of at most two places (a third or more must be zero), as cents: 0, or -1 when
 * s (NULL, or a column's text) is not one. What a later statement holds is written again
 * from these, never copied. */
int text_cents(const char *s, int64_t *out);

/* A tuple of the n strings v[0..n-1], or NULL with an exception set. */
PyObject *text_tuple(const char *const *v, int n);

/* The n arguments of a call as the loop sends them (text[0..n-1], n <= MAX_CALL_ARGS) as a
 * tuple of str; n < 0 (a writer found they did not fit): NULL with OverflowError. */
PyObject *text_args_tuple(char (*text)[ARG_TEXT], int n);

#endif
