/* Text the workloads write for the transports and for Python (text.h). */
#include <stdarg.h>

#include "text.h"

int text_put(char *buf, size_t size, size_t *at, const char *fmt, ...) {
    if (*at >= size) return -1;
    size_t room = size - *at;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *at, room, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= room) return -1;
    *at += (size_t)w;
    return 0;
}

int text_int_array(char *buf, size_t size, const int32_t *v, int n) {
    size_t at = 0;
    if (text_put(buf, size, &at, "{") < 0) return -1;
    for (int i = 0; i < n; i++)
        if (text_put(buf, size, &at, i ? ",%d" : "%d", (int)v[i]) < 0) return -1;
    return text_put(buf, size, &at, "}");
}

int text_cents(const char *s, int64_t *out) {
    const char *p = s;
    int neg = 0;
    int64_t whole = 0, frac = 0;
    if (!p) return -1;
    if (*p == '-') neg = 1, p++;
    const char *digits = p;
    while (*p >= '0' && *p <= '9' && p - digits < 15) whole = whole * 10 + (*p++ - '0');
    if (p == digits) return -1;
    if (*p == '.') {
        p++;
        for (int n = 0; n < 2; n++) frac = frac * 10 + (*p >= '0' && *p <= '9' ? *p++ - '0' : 0);
        while (*p == '0') p++;
    }
    if (*p) return -1;
    *out = neg ? -(whole * 100 + frac) : whole * 100 + frac;
    return 0;
}

PyObject *text_tuple(const char *const *v, int n) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_FromString(v[i]);
        if (!s) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

PyObject *text_args_tuple(char (*text)[ARG_TEXT], int n) {
    if (n < 0 || n > MAX_CALL_ARGS) {
        PyErr_SetString(PyExc_OverflowError, "an argument is too long for its buffer");
        return NULL;
    }
    const char *v[MAX_CALL_ARGS];
    for (int i = 0; i < n; i++) v[i] = text[i];
    return text_tuple(v, n);
}
